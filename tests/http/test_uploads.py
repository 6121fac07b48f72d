"""File uploads through the real app: multipart requests to both submission routes, on
each backend of the HTTP suite, with a real blob store beside each:

- memory: the in-memory blob store, on the service's fake clock;
- sqlite: the local directory store, in the test's temporary directory;
- postgres: the S3 store, against the S3-compatible server of tests/support/s3_server.py
  (moto's server mode, in this process), a bucket of its own for each test.

Every refusal is checked for its exact status and envelope, and for what it leaves in
the blob store: nothing but the files of stored submissions, and no unfinished write.
A success is followed from the answer to the stored row, the outbox event's signed link,
and the download of that link through the same app.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx2
import pytest

from intake.adapters.blobs.local import LocalBlobStore
from intake.adapters.blobs.s3 import S3BlobStore
from intake.domain.controls import HONEYPOT
from intake.domain.limits import PayloadLimits
from intake.domain.model import Challenge, ChallengeProvider, FieldRule, Form, Plan, RuleKind
from intake.domain.uploads import StoredFile, file_key
from intake.ports.blobs import BlobStore
from intake.service.admin import UploadChanges, WorkspaceChanges
from intake.service.sweep import sweep_uploads
from tests.http.conftest import (
    Backend,
    MemoryBackend,
    Seeded,
    Service,
    ServiceFactory,
    SqliteBackend,
    assert_error,
    assert_link_refused,
)
from tests.support.s3_server import REGION, S3Server

MAX_FILE = 20_000  # more than the 8 KiB head the type is read from
MAX_TOTAL = 50_000
MAX_FILES = 3
POLICY = UploadChanges(
    enabled=True, max_file_size=MAX_FILE, max_total_size=MAX_TOTAL, max_files=MAX_FILES
)
# Later than any blob or unfinished write a test makes: a listing with this cut-off shows
# the blobs and the leftovers of writes that never finished.
FAR_FUTURE = datetime(2100, 1, 1, tzinfo=UTC)
BOUNDARY = "----intake-test-boundary-7MA4YWxkTrZu0gW"
FIELDS = {"email": "ada@example.com", "name": "Ada"}
S3_PREFIX = "uploads"
CHUNK = 4096  # bytes of a request body the app receives at a time


def pdf(size: int, seed: int = 0) -> bytes:
    """A PDF of exactly `size` bytes (at least 32), different for each seed."""
    head = b"%PDF-1.7\n%" + bytes([0xE2, 0xE3, 0xCF, 0xD3]) + b"\n"
    tail = b"\n%%EOF\n"
    filler = hashlib.sha256(str(seed).encode()).hexdigest().encode()
    body = (filler * (size // len(filler) + 1))[: size - len(head) - len(tail)]
    made = head + body + tail
    assert len(made) == size
    return made


# An executable, which says it is a PDF.
ELF = b"\x7fELF\x02\x01\x01\x00" + b"\x00" * 8 + b"\x02\x00\x3e\x00" + b"\x00" * 1000


# -- multipart bodies -------------------------------------------------------------------

FilePart = tuple[str, str, bytes, str]  # field, file name, content, declared type


def multipart(
    fields: Mapping[str, str] | Sequence[tuple[str, str]] = (),
    files: Sequence[FilePart] = (),
) -> tuple[str, bytes]:
    """(Content-Type, body) of a multipart/form-data request in a browser's format. The
    files come first, so that they are stored before the text is read: a refusal then
    has something to take back."""
    items = list(fields.items()) if isinstance(fields, Mapping) else list(fields)
    text = [
        f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'.encode()
        + value.encode()
        + b"\r\n"
        for name, value in items
    ]
    parts = [
        (
            f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="{field}"; '
            f'filename="{filename}"\r\nContent-Type: {declared}\r\n\r\n'
        ).encode()
        + content
        + b"\r\n"
        for field, filename, content, declared in files
    ]
    body = b"".join(parts + text) + f"--{BOUNDARY}--\r\n".encode()
    return f"multipart/form-data; boundary={BOUNDARY}", body


# -- the service and its blob store ----------------------------------------------------


class Uploads:
    """A running service with a blob store, a workspace and a form that takes files."""

    def __init__(self, svc: Service) -> None:
        self.svc = svc
        self.seeded = Seeded(svc)
        self.form = self.take_files(self.seeded.form)
        self.pulled = 0  # body bytes the app asked for in the last request

    @property
    def blobs(self) -> BlobStore:
        return self.svc.blobs

    def take_files(self, form: Form, changes: UploadChanges = POLICY) -> Form:
        return self.svc.update_form(form.form_id, uploads=changes)

    def post(
        self,
        fields: Mapping[str, str] | Sequence[tuple[str, str]] = FIELDS,
        files: Sequence[FilePart] = (),
        *,
        form: Form | None = None,
        idempotency_key: str | None = None,
    ) -> httpx2.Response:
        """A multipart POST to the public route, its body arriving CHUNK bytes at a time
        as it would over a socket: each file is stored as its part ends, before the rest
        of the body is read. The answer is held against /openapi.json like any other."""
        content_type, body = multipart(fields, files)
        path = f"/f/{(form or self.form).public_form_key}"
        headers = [("content-type", content_type), ("content-length", str(len(body)))]
        if idempotency_key is not None:
            headers.append(("idempotency-key", idempotency_key))
        chunks = (body[at : at + CHUNK] for at in range(0, len(body), CHUNK))
        return self.raw(path, headers, chunks)

    def raw(
        self, path: str, headers: list[tuple[str, str]], chunks: Iterator[bytes]
    ) -> httpx2.Response:
        """A POST whose body the app pulls chunk by chunk, answered as the test client
        answers, and held against /openapi.json like any other."""
        exchange = self.svc.raw(path, headers, chunks)
        response = httpx2.Response(
            exchange.status,
            headers=list(exchange.headers.items()),
            content=exchange.body,
            request=httpx2.Request("POST", f"http://testserver{path}", headers=headers),
        )
        self.svc.spec.check(response)
        self.pulled = exchange.pulled
        return response

    # What the blob store holds

    def blob_keys(self) -> set[str]:
        """Every blob, and every unfinished write (`.incoming/...`)."""

        async def collect() -> set[str]:
            return {info.key async for info in self.blobs.list(older_than=FAR_FUTURE)}

        return self.svc.run(collect)

    def stored_files(self) -> list[StoredFile]:
        """The files every stored submission links."""
        files: list[StoredFile] = []
        for form in self.svc.run(self.svc.store.forms.list):
            for submission in self.svc.submissions(form.form_id):
                files.extend(submission.files)
        return files

    def assert_only_stored_files(self) -> None:
        """The store holds the files of stored submissions, whole, and nothing else."""
        linked = self.stored_files()
        assert self.blob_keys() == {stored.key for stored in linked}
        for stored in linked:
            info = self.svc.run(self.blobs.stat, stored.key)
            assert info is not None
            assert (info.size, info.sha256, info.content_type) == (
                stored.size,
                stored.sha256,
                stored.content_type,
            )

    def read(self, key: str) -> bytes:
        async def collect() -> bytes:
            return b"".join([chunk async for chunk in self.blobs.read(key)])

        return self.svc.run(collect)


def _blob_store(
    backend: Backend, tmp_path: Path, request: pytest.FixtureRequest
) -> tuple[BlobStore | None, str | None]:
    """The backend's blob store (None: the service's own in-memory one) and the S3 bucket
    made for it, if any."""
    if isinstance(backend, MemoryBackend):
        return None, None
    if isinstance(backend, SqliteBackend):
        return LocalBlobStore(tmp_path / "blobs"), None
    server: S3Server = request.getfixturevalue("s3_server")
    bucket = server.new_bucket()
    store = S3BlobStore(
        bucket,
        S3_PREFIX,
        endpoint_url=server.endpoint,
        region=REGION,
        session=server.session(),
    )
    return store, bucket


@pytest.fixture(scope="module")
def s3_server() -> Iterator[S3Server]:
    """Started only when a PostgreSQL test asks for it."""
    with S3Server() as server:
        yield server


@pytest.fixture
def up(
    backend: Backend,
    make_service: ServiceFactory,
    tmp_path: Path,
    request: pytest.FixtureRequest,
) -> Iterator[Uploads]:
    blobs, bucket = _blob_store(backend, tmp_path, request)
    svc = make_service(blobs=blobs)
    try:
        yield Uploads(svc)
    finally:
        svc.run(svc.blobs.aclose)
        if bucket is not None:
            server: S3Server = request.getfixturevalue("s3_server")
            server.drop_bucket(bucket)


def _path(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.path}?{parts.query}"


def _assert_download(response: httpx2.Response, content: bytes, type_: str) -> None:
    assert response.status_code == 200, response.text
    assert response.content == content
    assert response.headers["content-type"] == type_
    assert response.headers["content-length"] == str(len(content))
    assert response.headers["content-disposition"].startswith("attachment; filename=")
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["content-security-policy"] == "sandbox; default-src 'none'"
    assert response.headers["cache-control"] == "private, no-store"
    assert response.headers["etag"] == f'"{hashlib.sha256(content).hexdigest()}"'


# -- success ----------------------------------------------------------------------------


def test_files_are_stored_linked_announced_and_downloaded(up: Uploads) -> None:
    cv = pdf(12_345)  # past the 8 KiB head: sniffed, then streamed on
    letter = "Je vous écris pour le poste.\n".encode() * 10

    response = up.post(
        files=[
            ("cv", "CV Ada.pdf", cv, "application/pdf"),
            ("letter", "lettre-été.txt", letter, "text/plain"),
        ]
    )

    assert response.status_code == 201, response.text
    submission_id = response.json()["submission_id"]
    stored = up.svc.submission(submission_id)
    assert stored.data == FIELDS
    assert stored.files == (
        StoredFile(
            field="cv",
            name="CV Ada.pdf",
            size=len(cv),
            content_type="application/pdf",
            sha256=hashlib.sha256(cv).hexdigest(),
            key=file_key(submission_id, 0),
        ),
        StoredFile(
            field="letter",
            name="lettre-été.txt",
            size=len(letter),
            content_type="text/plain",
            sha256=hashlib.sha256(letter).hexdigest(),
            key=file_key(submission_id, 1),
        ),
    )
    assert up.read(file_key(submission_id, 0)) == cv
    up.assert_only_stored_files()

    (row,) = up.svc.outbox(submission_id)
    described = row.event.payload["files"]
    assert isinstance(described, list)
    assert [{k: v for k, v in entry.items() if k not in ("url", "url_expires_at")}
            for entry in described] == [
        {
            "field": "cv",
            "name": "CV Ada.pdf",
            "size": len(cv),
            "type": "application/pdf",
            "sha256": hashlib.sha256(cv).hexdigest(),
            "digest": f"sha256:{hashlib.sha256(cv).hexdigest()}",
        },
        {
            "field": "letter",
            "name": "lettre-été.txt",
            "size": len(letter),
            "type": "text/plain",
            "sha256": hashlib.sha256(letter).hexdigest(),
            "digest": f"sha256:{hashlib.sha256(letter).hexdigest()}",
        },
    ]  # fmt: skip
    expires = up.svc.clock.now() + timedelta(days=7)
    for index, entry in enumerate(described):
        url = urlsplit(entry["url"])
        assert url.path == f"/v1/files/{submission_id}/{index}"
        assert parse_qs(url.query)["expires"] == [str(int(expires.timestamp()))]
        assert datetime.fromisoformat(entry["url_expires_at"]) == expires

    first = up.svc.client.get(_path(described[0]["url"]))
    second = up.svc.client.get(_path(described[1]["url"]))
    head = up.svc.client.head(_path(described[0]["url"]))

    _assert_download(first, cv, "application/pdf")
    assert first.headers["content-disposition"] == (
        "attachment; filename=\"CV Ada.pdf\"; filename*=UTF-8''CV%20Ada.pdf"
    )
    _assert_download(second, letter, "text/plain")
    assert second.headers["content-disposition"] == (
        "attachment; filename=\"lettre-_t_.txt\"; filename*=UTF-8''lettre-%C3%A9t%C3%A9.txt"
    )
    assert head.status_code == 200
    assert head.content == b""
    assert head.headers["etag"] == first.headers["etag"]


def test_a_tampered_or_foreign_link_is_unauthorized(up: Uploads) -> None:
    response = up.post(files=[("cv", "cv.pdf", pdf(500), "application/pdf")])
    submission_id = response.json()["submission_id"]
    (row,) = up.svc.outbox(submission_id)
    described = row.event.payload["files"]
    assert isinstance(described, list)
    (entry,) = described
    url = urlsplit(entry["url"])
    query = {k: v[0] for k, v in parse_qs(url.query).items()}
    signature = query["signature"]
    flipped = ("A" if signature[0] != "A" else "B") + signature[1:]
    later = str(int(query["expires"]) + 1)

    tampered = [
        f"{url.path}?{urlencode({**query, 'signature': flipped})}",
        f"{url.path}?{urlencode({**query, 'expires': later})}",
        f"{url.path}?expires={query['expires']}",  # no signature
        f"/v1/files/{submission_id}/1?{url.query}",  # another file's link
    ]

    for path in tampered:
        assert_link_refused(up.svc.client.get(path), "unauthorized")
    # Still good: the untouched link.
    assert up.svc.client.get(_path(entry["url"])).status_code == 200


def test_the_server_route_takes_files_too(up: Uploads) -> None:
    content_type, body = multipart(FIELDS, [("cv", "cv.pdf", pdf(900), "application/pdf")])

    response = up.svc.server(
        up.form.form_id,
        up.seeded.key.secret,
        content=body,
        headers={"content-type": content_type},
    )

    assert response.status_code == 201, response.text
    stored = up.svc.submission(response.json()["submission_id"])
    assert [(f.field, f.name, f.size) for f in stored.files] == [("cv", "cv.pdf", 900)]
    up.assert_only_stored_files()


def test_an_empty_file_input_is_no_file(up: Uploads) -> None:
    # What a browser sends for an optional <input type=file> left empty.
    response = up.post(files=[("cv", "", b"", "application/octet-stream")])

    assert response.status_code == 201, response.text
    stored = up.svc.submission(response.json()["submission_id"])
    assert stored.files == ()
    assert stored.data == FIELDS
    (row,) = up.svc.outbox(stored.submission_id)
    assert row.event.payload["files"] == []
    assert up.blob_keys() == set()


def test_an_empty_file_input_is_no_file_on_a_form_without_uploads(up: Uploads) -> None:
    off = up.svc.update_form(up.form.form_id, uploads=UploadChanges(enabled=False))

    response = up.post(files=[("cv", "", b"", "application/octet-stream")], form=off)

    assert response.status_code == 201, response.text
    assert up.svc.submission(response.json()["submission_id"]).files == ()


# -- refusals ---------------------------------------------------------------------------


def test_a_file_to_a_form_without_uploads_is_refused_on_its_field(up: Uploads) -> None:
    off = up.svc.update_form(up.form.form_id, uploads=UploadChanges(enabled=False))

    response = up.post(files=[("cv", "cv.pdf", pdf(500), "application/pdf")], form=off)

    body = assert_error(response, "validation_failed")
    assert body["error"]["fields"] == {"cv": "File uploads are not accepted."}
    assert up.svc.stored() == (0, 0)
    assert up.blob_keys() == set()


def test_a_type_the_content_disproves_is_refused_on_its_field(up: Uploads) -> None:
    pdf_only = up.take_files(up.form, UploadChanges(allowed_types=("application/pdf",)))
    png = b"\x89PNG\r\n\x1a\n" + b"\x00" * 600

    disguised = up.post(files=[("cv", "cv.pdf", ELF, "application/pdf")], form=pdf_only)
    picture = up.post(
        files=[
            ("cv", "cv.pdf", pdf(700), "application/pdf"),  # good, and stored first
            ("photo", "me.pdf", png, "application/pdf"),
        ],
        form=pdf_only,
    )

    body = assert_error(disguised, "validation_failed")
    assert body["error"]["fields"] == {"cv": "This type of file is not accepted."}
    body = assert_error(picture, "validation_failed")
    assert body["error"]["fields"] == {"photo": "This type of file is not accepted."}
    assert up.svc.stored() == (0, 0)
    up.assert_only_stored_files()
    assert up.blob_keys() == set()


def test_a_file_of_exactly_the_limit_is_taken_and_one_byte_more_is_too_large(
    up: Uploads,
) -> None:
    over = up.post(files=[("cv", "cv.pdf", pdf(MAX_FILE + 1), "application/pdf")])
    # The same one byte over, after a good file was stored whole.
    over_second = up.post(
        files=[
            ("letter", "a.pdf", pdf(1000), "application/pdf"),
            ("cv", "cv.pdf", pdf(MAX_FILE + 1), "application/pdf"),
        ]
    )
    at = up.post(files=[("cv", "cv.pdf", pdf(MAX_FILE), "application/pdf")])

    assert_error(over, "payload_too_large")
    assert_error(over_second, "payload_too_large")
    assert at.status_code == 201, at.text
    (stored,) = up.svc.submission(at.json()["submission_id"]).files
    assert stored.size == MAX_FILE
    assert up.svc.stored() == (1, 1)
    up.assert_only_stored_files()


def test_files_over_the_total_are_too_large_and_exactly_the_total_is_taken(
    up: Uploads,
) -> None:
    def files(last: int) -> list[FilePart]:
        return [
            ("a", "a.pdf", pdf(MAX_FILE, 1), "application/pdf"),
            ("b", "b.pdf", pdf(MAX_FILE, 2), "application/pdf"),
            ("c", "c.pdf", pdf(last, 3), "application/pdf"),
        ]

    over = up.post(files=files(MAX_TOTAL - 2 * MAX_FILE + 1))
    at = up.post(files=files(MAX_TOTAL - 2 * MAX_FILE))

    assert_error(over, "payload_too_large")
    assert at.status_code == 201, at.text
    stored = up.svc.submission(at.json()["submission_id"]).files
    assert sum(f.size for f in stored) == MAX_TOTAL
    assert up.svc.stored() == (1, 1)
    up.assert_only_stored_files()


def test_one_file_more_than_max_files_is_too_large(up: Uploads) -> None:
    many = [(f"f{i}", f"{i}.pdf", pdf(5000, i), "application/pdf") for i in range(MAX_FILES + 1)]

    over = up.post(files=many)
    at = up.post(files=many[:MAX_FILES])

    assert_error(over, "payload_too_large")
    assert at.status_code == 201, at.text
    assert len(up.svc.submission(at.json()["submission_id"]).files) == MAX_FILES
    up.assert_only_stored_files()


def test_a_declared_length_over_the_upload_ceiling_is_refused_unread(up: Uploads) -> None:
    ceiling = PayloadLimits().upload_body_ceiling(MAX_TOTAL)
    content_type, body = multipart(FIELDS, [("cv", "cv.pdf", pdf(500), "application/pdf")])

    response = up.raw(
        f"/f/{up.form.public_form_key}",
        [("content-type", content_type), ("content-length", str(ceiling + 1))],
        iter([body]),
    )

    assert_error(response, "payload_too_large")
    assert up.pulled == 0
    assert up.svc.stored() == (0, 0)
    assert up.blob_keys() == set()


def test_text_beside_files_keeps_the_text_limits(up: Uploads) -> None:
    limits = PayloadLimits()
    cv = [("cv", "cv.pdf", pdf(5000), "application/pdf")]

    long_value = up.post({**FIELDS, "message": "x" * (limits.max_value + 1)}, cv)
    too_many = up.post([(f"field{i}", "v") for i in range(limits.max_fields + 1)], cv)

    assert_error(long_value, "payload_too_large")
    assert_error(too_many, "payload_too_large")
    assert up.svc.stored() == (0, 0)
    assert up.blob_keys() == set()


def test_a_filled_honeypot_with_a_file_looks_accepted_and_keeps_nothing(up: Uploads) -> None:
    real = up.post(files=[("cv", "cv.pdf", pdf(9000, 1), "application/pdf")])

    decoy = up.post(
        {**FIELDS, HONEYPOT: "I am a bot"}, [("cv", "cv.pdf", pdf(9000, 2), "application/pdf")]
    )

    assert real.status_code == 201, real.text
    assert decoy.status_code == 201, decoy.text
    assert set(decoy.json()) == set(real.json())
    assert decoy.json()["ok"] is True
    assert decoy.json()["submission_id"].startswith("sub_")
    assert decoy.json()["submission_id"] != real.json()["submission_id"]
    assert up.svc.stored() == (1, 1)
    up.assert_only_stored_files()
    assert len(up.blob_keys()) == 1


def test_a_failed_challenge_with_a_file_is_refused_and_keeps_nothing(up: Uploads) -> None:
    guarded = up.svc.update_form(
        up.form.form_id, challenge=Challenge(ChallengeProvider.TURNSTILE, "secret")
    )

    response = up.post(
        {**FIELDS, "cf-turnstile-response": "a-token-the-provider-rejects"},
        [("cv", "cv.pdf", pdf(9000), "application/pdf")],
        form=guarded,
    )

    assert_error(response, "challenge_failed")
    assert up.seeded.fake_challenge.calls  # refused by the provider, after the file
    assert up.svc.stored() == (0, 0)
    assert up.blob_keys() == set()


def test_a_validation_error_beside_a_valid_file_is_refused_and_keeps_nothing(
    up: Uploads,
) -> None:
    rules = [FieldRule("email", RuleKind.EMAIL), FieldRule("phone", RuleKind.REQUIRED)]
    strict = up.svc.update_form(up.form.form_id, rules=rules)

    response = up.post(
        {"email": "not an address"}, [("cv", "cv.pdf", pdf(9000), "application/pdf")], form=strict
    )

    body = assert_error(response, "validation_failed")
    assert set(body["error"]["fields"]) == {"email", "phone"}
    assert up.svc.stored() == (0, 0)
    assert up.blob_keys() == set()


def test_an_exhausted_quota_is_refused_and_keeps_nothing(up: Uploads) -> None:
    workspace_id = up.seeded.workspace.workspace_id
    changes = WorkspaceChanges(plan=Plan.FREE, monthly_limit=1)
    up.svc.run(up.svc.services.workspaces.update, workspace_id, changes)
    accepted = up.post(files=[("cv", "cv.pdf", pdf(800, 1), "application/pdf")])

    refused = up.post(files=[("cv", "cv.pdf", pdf(9000, 2), "application/pdf")])

    assert accepted.status_code == 201, accepted.text
    assert_error(refused, "quota_exceeded")
    assert up.svc.stored() == (1, 1)
    assert len(up.stored_files()) == 1
    up.assert_only_stored_files()


def test_an_idempotent_replay_with_the_same_file_is_200_and_another_file_409(
    up: Uploads,
) -> None:
    cv = [("cv", "cv.pdf", pdf(9000, 1), "application/pdf")]
    key = f"upload-{secrets.token_hex(4)}"

    first = up.post(files=cv, idempotency_key=key)
    replay = up.post(files=cv, idempotency_key=key)
    other_content = up.post(
        files=[("cv", "cv.pdf", pdf(9000, 2), "application/pdf")], idempotency_key=key
    )
    other_name = up.post(
        files=[("cv", "resume.pdf", pdf(9000, 1), "application/pdf")], idempotency_key=key
    )
    no_file = up.post(idempotency_key=key)

    assert first.status_code == 201, first.text
    assert replay.status_code == 200, replay.text
    assert replay.json()["submission_id"] == first.json()["submission_id"]
    for conflict in (other_content, other_name, no_file):
        assert_error(conflict, "idempotency_conflict")
    assert up.svc.stored() == (1, 1)
    assert up.blob_keys() == {file_key(first.json()["submission_id"], 0)}
    up.assert_only_stored_files()


def test_a_failed_commit_leaves_its_files_for_the_sweep(up: Uploads) -> None:
    """The database may have stored the submission before the failure reached us, so
    its files stay until the sweep has checked that no submission links them."""
    kept = up.post(files=[("cv", "cv.pdf", pdf(700, 1), "application/pdf")])
    up.svc.fail_commits(1)

    failed = up.post(files=[("cv", "cv.pdf", pdf(9000, 2), "application/pdf")])

    assert kept.status_code == 201, kept.text
    body = assert_error(failed, "service_unavailable")
    assert failed.headers["retry-after"] == "1"
    assert body["request_id"]
    linked = {stored.key for stored in up.stored_files()}
    left = up.blob_keys() - linked
    assert len(left) == 1
    assert linked <= up.blob_keys()

    swept = up.svc.run(sweep_uploads, up.blobs, up.svc.store.submissions, FAR_FUTURE)

    assert (swept.orphans, swept.incomplete) == (1, 0)
    up.assert_only_stored_files()
