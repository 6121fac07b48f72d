"""GET and HEAD /v1/files/{submission_id}/{index}: uploaded files by their signed links.

The app runs on the in-memory store and the in-memory blob store, with the fake clock the
HTTP suite uses. A submission with files is committed straight through the store and its
blobs written through the blob store; links come from the runtime's own signer. Every
answer is also held against what /openapi.json documents for the route.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import types
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterator
from contextlib import ExitStack
from datetime import timedelta
from typing import Any, ParamSpec, TypeVar
from urllib.parse import unquote, urlsplit

import anyio
import httpx2
import pytest
from starlette.testclient import TestClient
from starlette.types import Message, Scope

from intake.adapters.blobs.memory import InMemoryBlobStore
from intake.adapters.memory import FakeChallengeVerifier, FakeClock, InMemoryStore, SeededIdSource
from intake.config import Settings
from intake.domain import ids
from intake.domain.errors import StorageUnavailable
from intake.domain.model import Form, OutboxEvent, Submission, SubmissionStatus
from intake.domain.signing import DownloadSigner
from intake.domain.uploads import StoredFile, file_key
from intake.entrypoints.http import create_app
from intake.library_runtime import open_runtime
from intake.logs import JsonFormatter
from intake.ports.blobs import validate_content_type
from intake.ports.submissions import CommitPlan, Committed
from intake.resources import DOWNLOAD_SECRET_NAME
from intake.serve_runtime import ServeRuntime
from intake.service.admin import owner_services
from tests.http.conftest import (
    BROWSER_ACCEPT,
    LINK_MESSAGES,
    assert_link_refused,
)
from tests.http.spec_check import validate

P = ParamSpec("P")
T = TypeVar("T")

ROUTE = "/v1/files/{submission_id}/{index}"
PDF = b"%PDF-1.7\n" + bytes(range(256)) * 4 + b"\n%%EOF\n"
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 70_000 + b"end"  # more than one 64 KiB chunk
SECRET = "download-secret-of-at-least-32-characters"


class Downloads:
    """A running app, its store and blob store, and the files of committed submissions."""

    def __init__(
        self, client: TestClient, store: InMemoryStore, blobs: InMemoryBlobStore, clock: FakeClock
    ) -> None:
        self.client = client
        self.store = store
        self.blobs = blobs
        self.clock = clock
        self.ids = SeededIdSource(3)
        self.services = owner_services(store, clock, self.ids)
        self.document: dict[str, Any] = client.get("/openapi.json").json()
        self._count = 0
        workspace = self.run(self.services.workspaces.create, "Acme")
        self.form: Form = self.run(self.services.forms.create, workspace.workspace_id, name="Jobs")

    @property
    def runtime(self) -> ServeRuntime:
        app = self.client.app
        runtime: ServeRuntime = app.state.runtime  # type: ignore[attr-defined]
        return runtime

    @property
    def signer(self) -> DownloadSigner:
        return self.runtime.signer

    def run(self, fn: Callable[P, Awaitable[T]], *args: P.args, **kwargs: P.kwargs) -> T:
        portal = self.client.portal
        assert portal is not None
        return portal.call(functools.partial(fn, *args, **kwargs))

    def submit(self, *files: tuple[str, bytes, str], write: bool = True) -> str:
        """Commits a submission with these (name, content, type) files; their blobs are
        written unless `write` is false. Returns the submission id."""
        self._count += 1
        submission_id = ids.submission_id(self._count, self.ids.random_bytes(12))
        stored = tuple(
            StoredFile(
                field="attachment",
                name=name,
                size=len(content),
                content_type=content_type,
                sha256=hashlib.sha256(content).hexdigest(),
                key=file_key(submission_id, index),
            )
            for index, (name, content, content_type) in enumerate(files)
        )
        if write:
            for item, (_, content, _) in zip(stored, files, strict=True):
                self.run(self._write, item, content)
        submission = Submission(
            submission_id=submission_id,
            form_id=self.form.form_id,
            workspace_id=self.form.workspace_id,
            status=SubmissionStatus.ACCEPTED,
            data={"name": "Ada"},
            created_at=self.clock.now(),
            files=stored,
        )
        event = OutboxEvent.for_submission(
            ids.prefixed_id("evt", self.ids.random_bytes(16)), submission, self.signer
        )
        result = self.run(self.store.submissions.commit, CommitPlan(submission, event, None, None))
        assert isinstance(result, Committed)
        return submission_id

    async def _write(self, item: StoredFile, content: bytes) -> None:
        try:
            content_type = validate_content_type(item.content_type)
        except ValueError:  # a test of a row the store would never have been given
            content_type = "application/octet-stream"
        async with await self.blobs.writer(
            item.key, content_type=content_type, max_size=len(content)
        ) as writer:
            await writer.write(content)
            await writer.commit()

    def path(self, submission_id: str, index: int) -> str:
        """The path and query of a link the runtime signs now."""
        url = urlsplit(self.signer.link(submission_id, index, self.clock.now()).url)
        return f"{url.path}?{url.query}"

    def get(self, path: str, *, method: str = "GET", **kwargs: Any) -> httpx2.Response:
        response = self.client.request(method, path, **kwargs)
        self.check(response)
        return response

    def check(self, response: httpx2.Response) -> None:
        """The answer is one the document describes: status, headers, body."""
        assert response.headers.get("x-request-id")
        operation = self.document["paths"][ROUTE][response.request.method.lower()]
        spec = operation["responses"][str(response.status_code)]
        for name, header in spec.get("headers", {}).items():
            value = response.headers.get(name)
            if value is None:
                assert not header.get("required"), f"{response.status_code} lacks {name}"
                continue
            validate(value, header["schema"])
        media = response.headers["content-type"].split(";")[0].strip()
        content = spec["content"]
        assert media in content or "*/*" in content, media
        if media == "application/json" and response.request.method == "GET":
            validate(response.json(), content[media]["schema"])


def _serve(
    stack: ExitStack, settings: Settings, store: InMemoryStore, clock: FakeClock, **ports: Any
) -> TestClient:
    app = create_app(
        settings,
        store=store,
        clock=clock,
        id_source=SeededIdSource(),
        challenge=FakeChallengeVerifier(),
        **ports,
    )
    return stack.enter_context(TestClient(app, follow_redirects=False))


@pytest.fixture
def svc() -> Iterator[Downloads]:
    clock = FakeClock()
    store = InMemoryStore()
    blobs = InMemoryBlobStore(clock=clock)
    with ExitStack() as stack:
        client = _serve(stack, Settings(blob_url=None), store, clock, blobs=blobs)
        yield Downloads(client, store, blobs, clock)


# -- the document -----------------------------------------------------------------------


def test_the_document_describes_get_and_head_with_every_answer(svc: Downloads) -> None:
    path = svc.document["paths"][ROUTE]

    assert set(path) == {"get", "head"}
    for operation in path.values():
        assert set(operation["responses"]) == {"200", "401", "404", "503"}
        names = {(p["in"], p["name"]) for p in operation["parameters"]}
        assert names == {
            ("path", "submission_id"),
            ("path", "index"),
            ("query", "expires"),
            ("query", "signature"),
        }
        assert operation["responses"]["503"]["headers"]["Retry-After"]["required"] is True


def test_the_document_describes_the_file_as_binary(svc: Downloads) -> None:
    # A client generator keeps a 200 it can type: `application/octet-stream` named, and
    # every media type of the answer binary (a `*/*` alone, untyped, it drops).
    for operation in svc.document["paths"][ROUTE].values():
        content = operation["responses"]["200"]["content"]

        assert "application/octet-stream" in content
        for media in content.values():
            assert media["schema"] == {"type": "string", "format": "binary"}


# -- the file ---------------------------------------------------------------------------


def test_a_signed_link_downloads_the_exact_bytes_with_safe_headers(svc: Downloads) -> None:
    submission_id = svc.submit(("cv.pdf", PDF, "application/pdf"), ("me.png", PNG, "image/png"))

    first = svc.get(svc.path(submission_id, 0))
    second = svc.get(svc.path(submission_id, 1))

    assert first.status_code == 200
    assert first.content == PDF
    assert first.headers["content-type"] == "application/pdf"
    assert first.headers["content-length"] == str(len(PDF))
    assert first.headers["content-disposition"] == (
        "attachment; filename=\"cv.pdf\"; filename*=UTF-8''cv.pdf"
    )
    assert first.headers["x-content-type-options"] == "nosniff"
    assert first.headers["content-security-policy"] == "sandbox; default-src 'none'"
    assert first.headers["cache-control"] == "private, no-store"
    assert first.headers["referrer-policy"] == "no-referrer"
    assert first.headers["etag"] == f'"{hashlib.sha256(PDF).hexdigest()}"'
    # The second file is read in several chunks, all of them sent.
    assert second.status_code == 200
    assert second.content == PNG
    assert second.headers["content-type"] == "image/png"
    assert second.headers["content-length"] == str(len(PNG))


def test_an_empty_file_downloads_as_zero_bytes(svc: Downloads) -> None:
    submission_id = svc.submit(("empty.txt", b"", "text/plain"))

    response = svc.get(svc.path(submission_id, 0))

    assert response.status_code == 200
    assert response.content == b""
    assert response.headers["content-length"] == "0"


def test_head_gives_the_headers_without_the_body(svc: Downloads) -> None:
    submission_id = svc.submit(("cv.pdf", PDF, "application/pdf"))
    path = svc.path(submission_id, 0)

    head = svc.get(path, method="HEAD")
    get = svc.get(path)

    assert head.status_code == 200
    assert head.content == b""
    for name in (
        "content-type",
        "content-length",
        "content-disposition",
        "etag",
        "x-content-type-options",
        "content-security-policy",
        "cache-control",
    ):
        assert head.headers[name] == get.headers[name], name


def test_a_type_that_cannot_be_a_header_is_served_as_plain_bytes(svc: Downloads) -> None:
    submission_id = svc.submit(("odd.bin", b"data", "text/html; charset=utf-8\r\nX-Evil: 1"))

    response = svc.get(svc.path(submission_id, 0))

    assert response.status_code == 200
    assert response.headers["content-type"] == "application/octet-stream"
    assert "x-evil" not in response.headers


@pytest.mark.parametrize(
    ("name", "fallback", "decoded"),
    [
        pytest.param(
            'my "report"\r\nX-Evil: 1.pdf',
            "my _report_X-Evil: 1.pdf",
            'my "report"X-Evil: 1.pdf',
            id="quotes and CR LF",
        ),
        pytest.param("résumé 2026 📄.pdf", "r_sum_ 2026 _.pdf", "résumé 2026 📄.pdf", id="unicode"),
        pytest.param("100%\\..\\evil;.txt", "evil;.txt", "evil;.txt", id="path and percent"),
        pytest.param("\r\n", "file", "file", id="nothing left"),
    ],
)
def test_the_file_name_is_offered_safely_encoded(
    svc: Downloads, name: str, fallback: str, decoded: str
) -> None:
    submission_id = svc.submit((name, b"hello", "text/plain"))

    response = svc.get(svc.path(submission_id, 0))

    assert response.status_code == 200
    disposition = response.headers["content-disposition"]
    assert disposition.isascii()
    assert "\r" not in disposition
    assert "\n" not in disposition
    assert "x-evil" not in response.headers
    head, plain, extended = disposition.split("; ")
    assert head == "attachment"
    assert plain == f'filename="{fallback}"'
    assert extended.startswith("filename*=UTF-8''")
    value = extended.removeprefix("filename*=UTF-8''")
    # Only RFC 8187 attr-chars and percent escapes: no quote, space, comma or semicolon.
    assert all(ch.isalnum() or ch in "!#$&+-.^_`|~%" for ch in value), value
    assert unquote(value, encoding="utf-8") == decoded


class _SpyBlobs(InMemoryBlobStore):
    """Keeps every reader it hands out, to see that each was closed."""

    def __init__(self, clock: FakeClock) -> None:
        super().__init__(clock=clock)
        self.readers: list[AsyncGenerator[bytes, None]] = []

    def read(self, key: str, *, chunk_size: int = 65536) -> AsyncGenerator[bytes, None]:
        reader = super().read(key, chunk_size=chunk_size)
        self.readers.append(reader)
        return reader


def _closed(reader: AsyncGenerator[bytes, None]) -> bool:
    assert isinstance(reader, types.AsyncGeneratorType)
    return reader.ag_frame is None


def test_the_blob_reader_is_closed_when_the_client_goes_away_mid_download() -> None:
    clock, store = FakeClock(), InMemoryStore()
    blobs = _SpyBlobs(clock)
    with ExitStack() as stack:
        client = _serve(stack, Settings(blob_url=None), store, clock, blobs=blobs)
        svc = Downloads(client, store, blobs, clock)
        submission_id = svc.submit(("me.png", PNG * 4, "image/png"))
        path, _, query = svc.path(submission_id, 0).partition("?")
        received: list[Message] = []

        async def download() -> None:
            gone = anyio.Event()
            asked: list[bool] = []

            async def receive() -> Message:
                if not asked:
                    asked.append(True)
                    return {"type": "http.request", "body": b"", "more_body": False}
                await gone.wait()  # the first chunk has arrived: the client hangs up
                return {"type": "http.disconnect"}

            async def send(message: Message) -> None:
                received.append(message)
                if message["type"] == "http.response.body":
                    gone.set()
                    await anyio.sleep_forever()  # a client that reads no more

            scope: Scope = {
                "type": "http",
                "asgi": {"version": "3.0"},
                "http_version": "1.1",
                "method": "GET",
                "scheme": "http",
                "path": path,
                "raw_path": path.encode(),
                "root_path": "",
                "query_string": query.encode(),
                "headers": [],
                "client": ("203.0.113.5", 1234),
                "server": ("testserver", 80),
            }
            with anyio.fail_after(5):
                await client.app(scope, receive, send)

        svc.run(download)

        (reader,) = blobs.readers
        assert received[0]["status"] == 200
        assert [m["type"] for m in received] == ["http.response.start", "http.response.body"]
        assert _closed(reader)


def test_the_blob_reader_is_closed_after_a_whole_download() -> None:
    clock, store = FakeClock(), InMemoryStore()
    blobs = _SpyBlobs(clock)
    with ExitStack() as stack:
        client = _serve(stack, Settings(blob_url=None), store, clock, blobs=blobs)
        svc = Downloads(client, store, blobs, clock)
        submission_id = svc.submit(("me.png", PNG, "image/png"))

        assert svc.get(svc.path(submission_id, 0)).content == PNG

    (reader,) = blobs.readers
    assert _closed(reader)


# -- refused links ----------------------------------------------------------------------


def _query(path: str) -> dict[str, str]:
    return dict(part.split("=", 1) for part in urlsplit(path).query.split("&"))


def _service_records(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    """The service's own log records (the test client logs the URLs it calls)."""
    return [r for r in caplog.records if r.name.split(".")[0] in ("intake", "uvicorn")]


def test_a_tampered_signature_is_unauthorized(svc: Downloads) -> None:
    submission_id = svc.submit(("cv.pdf", PDF, "application/pdf"))
    path = svc.path(submission_id, 0)
    signature = _query(path)["signature"]
    flipped = ("A" if signature[0] != "A" else "B") + signature[1:]

    response = svc.get(path.replace(signature, flipped))

    assert_link_refused(response, "unauthorized")
    assert "www-authenticate" not in response.headers


def test_a_later_expiry_with_the_old_signature_is_unauthorized(svc: Downloads) -> None:
    submission_id = svc.submit(("cv.pdf", PDF, "application/pdf"))
    path = svc.path(submission_id, 0)
    expires = _query(path)["expires"]

    response = svc.get(path.replace(f"expires={expires}", f"expires={int(expires) + 86400}"))

    assert_link_refused(response, "unauthorized")


def test_another_files_signature_is_unauthorized(svc: Downloads) -> None:
    submission_id = svc.submit(("a.txt", b"a", "text/plain"), ("b.txt", b"b", "text/plain"))
    other_id = svc.submit(("c.txt", b"c", "text/plain"))
    query = urlsplit(svc.path(submission_id, 1)).query

    same_submission = svc.get(f"/v1/files/{submission_id}/0?{query}")
    other_submission = svc.get(f"/v1/files/{other_id}/1?{query}")

    assert_link_refused(same_submission, "unauthorized")
    assert_link_refused(other_submission, "unauthorized")


def test_a_link_works_until_it_expires(svc: Downloads) -> None:
    submission_id = svc.submit(("cv.pdf", PDF, "application/pdf"))
    path = svc.path(submission_id, 0)
    ttl = svc.signer.ttl.total_seconds()
    assert ttl == Settings().download_ttl == 7 * 86400

    svc.clock.advance(ttl - 1)
    assert svc.get(path).status_code == 200
    svc.clock.advance(1)
    assert_link_refused(svc.get(path), "unauthorized")
    assert svc.get(path, method="HEAD").status_code == 401


@pytest.mark.parametrize(
    "query",
    [
        pytest.param("", id="no query"),
        pytest.param("?expires={expires}", id="no signature"),
        pytest.param("?signature={signature}", id="no expiry"),
        pytest.param("?expires=&signature={signature}", id="empty expiry"),
        pytest.param("?expires={expires}&signature=", id="empty signature"),
        pytest.param("?expires=-1&signature={signature}", id="negative expiry"),
        pytest.param("?expires=99999999999999&signature={signature}", id="far expiry"),
    ],
)
def test_a_missing_or_incomplete_query_is_unauthorized(svc: Downloads, query: str) -> None:
    submission_id = svc.submit(("cv.pdf", PDF, "application/pdf"))
    given = _query(svc.path(submission_id, 0))

    response = svc.get(f"/v1/files/{submission_id}/0" + query.format(**given))

    assert_link_refused(response, "unauthorized")


def test_the_link_is_checked_before_anything_is_looked_up(svc: Downloads) -> None:
    # Without a genuine link, an unknown submission is not told apart from a known one.
    known = svc.submit(("cv.pdf", PDF, "application/pdf"))

    for submission_id in (known, "sub_unknown"):
        assert_link_refused(
            svc.get(f"/v1/files/{submission_id}/0?expires=1&signature=x"), "unauthorized"
        )


def test_a_browser_gets_the_refusal_as_a_page(svc: Downloads) -> None:
    submission_id = svc.submit(("cv.pdf", PDF, "application/pdf"))

    response = svc.get(
        f"/v1/files/{submission_id}/0", headers={"accept": "text/html,application/xhtml+xml"}
    )

    assert response.status_code == 401
    assert response.headers["content-type"].startswith("text/html")
    assert "<title>Download failed</title>" in response.text
    assert f"<p>{LINK_MESSAGES['unauthorized']}</p>" in response.text
    assert "API key" not in response.text
    assert "Submission" not in response.text


def test_a_browser_is_told_a_missing_file_is_not_there(svc: Downloads) -> None:
    response = svc.get(
        svc.path("sub_0000000000000000000000000", 0), headers={"accept": BROWSER_ACCEPT}
    )

    assert response.status_code == 404
    assert "<title>Download failed</title>" in response.text
    assert f"<p>{LINK_MESSAGES['form_not_found']}</p>" in response.text
    assert "form" not in response.text.split("<body>")[1]


# -- nothing there ----------------------------------------------------------------------


def test_an_unknown_submission_is_not_found(svc: Downloads) -> None:
    response = svc.get(svc.path("sub_0000000000000000000000000", 0))

    assert_link_refused(response, "form_not_found")


def test_an_index_past_the_files_is_not_found(svc: Downloads) -> None:
    submission_id = svc.submit(("cv.pdf", PDF, "application/pdf"))
    without_files = svc.submit()

    assert_link_refused(svc.get(svc.path(submission_id, 1)), "form_not_found")
    assert_link_refused(svc.get(svc.path(submission_id, 99)), "form_not_found")
    assert_link_refused(svc.get(svc.path(without_files, 0)), "form_not_found")


@pytest.mark.parametrize("index", ["x", "-1", "01", "1.0", "1e3", "١", "²", "100", "99999999999"])
def test_an_index_that_is_no_small_number_is_not_found(svc: Downloads, index: str) -> None:
    submission_id = svc.submit(("cv.pdf", PDF, "application/pdf"))
    query = urlsplit(svc.path(submission_id, 0)).query

    response = svc.get(f"/v1/files/{submission_id}/{index}?{query}")

    assert_link_refused(response, "form_not_found")


def test_a_missing_blob_is_not_found_and_logged_by_ids_only(
    svc: Downloads, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    submission_id = svc.submit(("cv.pdf", PDF, "application/pdf"), write=False)
    path = svc.path(submission_id, 0)

    get = svc.get(path)
    head = svc.get(path, method="HEAD")

    assert_link_refused(get, "form_not_found")
    assert head.status_code == 404
    warnings = [r for r in caplog.records if "missing from the blob store" in r.getMessage()]
    assert len(warnings) == 2
    line = json.loads(JsonFormatter().format(warnings[0]))
    assert line["submission_id"] == submission_id
    assert line["index"] == 0
    text = "\n".join(r.getMessage() + str(vars(r)) for r in _service_records(caplog))
    assert _query(path)["signature"] not in text
    assert "cv.pdf" not in text


def test_without_a_blob_store_no_file_is_found() -> None:
    clock, store = FakeClock(), InMemoryStore()
    with ExitStack() as stack:
        client = _serve(stack, Settings(blob_url=None), store, clock)
        svc = Downloads(client, store, InMemoryBlobStore(clock=clock), clock)
        assert svc.runtime.blobs is None
        submission_id = svc.submit(("cv.pdf", PDF, "application/pdf"))

        assert_link_refused(svc.get(svc.path(submission_id, 0)), "form_not_found")


# -- outages ----------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["GET", "HEAD"])
def test_an_unavailable_blob_store_is_a_503_with_retry_after(svc: Downloads, method: str) -> None:
    submission_id = svc.submit(("cv.pdf", PDF, "application/pdf"))
    svc.blobs.unavailable = True

    response = svc.get(svc.path(submission_id, 0), method=method)

    assert response.status_code == 503
    assert response.headers["retry-after"] == "1"
    if method == "GET":
        assert_link_refused(response, "service_unavailable")


def test_an_unavailable_database_is_a_503(svc: Downloads) -> None:
    submission_id = svc.submit(("cv.pdf", PDF, "application/pdf"))
    path = svc.path(submission_id, 0)

    async def fail(submission_id: str) -> Submission | None:
        raise StorageUnavailable("injected")

    svc.store.submissions.get = fail  # type: ignore[method-assign]
    response = svc.get(path)

    assert_link_refused(response, "service_unavailable")
    assert response.headers["retry-after"] == "1"


# -- logs -------------------------------------------------------------------------------


def test_the_access_log_names_the_route_and_never_the_link(
    svc: Downloads, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    submission_id = svc.submit(("cv.pdf", PDF, "application/pdf"))
    path = svc.path(submission_id, 0)
    signature = _query(path)["signature"]

    svc.get(path)
    svc.get(path.replace(signature, signature[::-1]))

    formatter = JsonFormatter()
    lines = [json.loads(formatter.format(r)) for r in caplog.records if r.name == "intake.access"]
    assert [(line["route"], line["method"], line["status"]) for line in lines] == [
        ("/v1/files/{submission_id}/{index}", "GET", 200),
        ("/v1/files/{submission_id}/{index}", "GET", 401),
    ]
    assert lines[0]["form_id"] == svc.form.form_id
    assert lines[0]["outcome"] is None  # a download is no submission
    text = "\n".join(formatter.format(r) for r in _service_records(caplog))
    assert signature not in text
    assert signature[::-1] not in text


# -- the secret -------------------------------------------------------------------------


def test_every_runtime_on_one_database_signs_with_the_same_stored_secret() -> None:
    store = InMemoryStore()

    async def secrets() -> tuple[bytes, bytes, bytes]:
        async with (
            open_runtime(Settings(blob_url=None), store=store) as first,
            open_runtime(Settings(blob_url=None), store=store) as second,
        ):
            stored = await store.secrets.get_or_create(DOWNLOAD_SECRET_NAME, b"x" * 32)
            return first.signer.secret, second.signer.secret, stored

    first, second, stored = anyio.run(secrets)

    assert first == second == stored
    assert len(first) == 32


def test_a_configured_secret_and_base_url_are_used() -> None:
    settings = Settings(
        blob_url=None,
        download_secret=SECRET,
        base_url="https://forms.example.com/",
        download_ttl=3600,
    )

    async def signer() -> DownloadSigner:
        async with open_runtime(settings, store=InMemoryStore()) as runtime:
            return runtime.signer

    made = anyio.run(signer)

    assert made.secret == SECRET.encode()
    assert made.ttl == timedelta(hours=1)
    link = made.link("sub_1", 0, FakeClock().now())
    assert link.url.startswith("https://forms.example.com/v1/files/sub_1/0?expires=")


class _SecretsDown:
    async def get_or_create(self, name: str, candidate: bytes) -> bytes:
        raise StorageUnavailable("postgres: the database schema is missing")


def test_a_runtime_opens_without_the_stored_secret_and_refuses_links_until_it_reads_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # `intake migrate` opens a runtime on a database that has no table for the secret yet;
    # a service may start while its database is unreachable. (It reads the secret once
    # the database answers: tests/unit/test_signer_resource.py.)
    caplog.set_level(logging.INFO, logger="intake")
    clock, store = FakeClock(), InMemoryStore()
    blobs = InMemoryBlobStore(clock=clock)
    working = DownloadSigner(b"k" * 32, "http://127.0.0.1:8000")
    with ExitStack() as stack:
        stack.enter_context(pytest.MonkeyPatch.context()).setattr(store, "secrets", _SecretsDown())
        client = _serve(stack, Settings(blob_url=None), store, clock, blobs=blobs)
        runtime: ServeRuntime = client.app.state.runtime  # type: ignore[attr-defined]
        with pytest.raises(StorageUnavailable):
            runtime.signer.link("sub_1", 0, clock.now())
        url = urlsplit(working.link("sub_1", 0, clock.now()).url)

        response = client.get(f"{url.path}?{url.query}")

    assert_link_refused(response, "service_unavailable")
    assert any("download links wait for the database" in r.getMessage() for r in caplog.records)
