"""Uploads through the whole pipeline, on the in-memory world and blob store: a stored
submission links exactly the files it was sent, its event carries a working signed link
to each, and a request that is not stored leaves no file behind (but for a commit that
failed, whose files the sweep decides on)."""

from __future__ import annotations

import asyncio
import enum
import hashlib
from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qs, urlsplit

import pytest
from attrs import evolve, frozen
from hypothesis import event, given
from hypothesis import strategies as st

from intake.adapters.blobs.memory import InMemoryBlobStore
from intake.adapters.memory import SeededIdSource
from intake.adapters.memory.submissions import InMemorySubmissions
from intake.domain.errors import ErrorCode
from intake.domain.model import FieldRule, Form, RuleKind
from intake.domain.signing import DownloadSigner
from intake.domain.sniffing import sniff
from intake.domain.steps import Step
from intake.domain.uploads import TYPE_NOT_ACCEPTED, StoredFile, UploadPolicy
from intake.ports.submissions import CommitPlan, CommitResult, IdempotencyTaken
from intake.service.messages import Accepted, BodyDeadline, Outcome, RawBody, Refused
from intake.service.pipeline import PipelineSettings, SubmissionPipeline
from intake.service.sweep import sweep_uploads
from tests.property.strategies import BOUNDARY, MULTIPART_TYPE, WireBody, encode_json
from tests.property.world import (
    CHALLENGE,
    PASSING_TOKEN,
    REJECTED_TOKEN,
    UNLIMITED,
    World,
    public,
    request,
)

pytestmark = pytest.mark.anyio

SIGNER = DownloadSigner(b"download-links-secret-of-32-byte", "https://forms.example")
FAR_FUTURE = datetime(2100, 1, 1, tzinfo=UTC)

PDF = b"%PDF-1.7\n" + b"0123456789abcdef" * 40
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256))
EXE = b"MZ\x90\x00\x03\x00\x00\x00\x04\x00\x00\x00\xff\xff\x00\x00\xb8" + b"\x00" * 64


@frozen
class Upload:
    field: str
    filename: str
    content: bytes
    declared: str | None = "application/octet-stream"


def encode(fields: Sequence[tuple[str, str]], files: Sequence[Upload] = ()) -> bytes:
    out = bytearray()
    for name, value in fields:
        out += f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'.encode()
        out += value.encode() + b"\r\n"
    for item in files:
        out += f"--{BOUNDARY}\r\n".encode()
        out += (
            f'Content-Disposition: form-data; name="{item.field}"; filename="{item.filename}"\r\n'
        ).encode()
        if item.declared is not None:
            out += f"Content-Type: {item.declared}\r\n".encode("latin-1")
        out += b"\r\n" + item.content + b"\r\n"
    out += f"--{BOUNDARY}--\r\n".encode()
    return bytes(out)


def body(
    fields: Sequence[tuple[str, str]] = (("name", "Ada"),),
    files: Sequence[Upload] = (),
    *,
    cuts: Sequence[int] = (),
) -> RawBody:
    return WireBody(MULTIPART_TYPE, encode(fields, files), tuple(cuts)).open()


def build(*, blobs: bool = True, settings: PipelineSettings | None = None) -> UploadWorld:
    world = World.build(settings or PipelineSettings(rate_limits=UNLIMITED))
    store = InMemoryBlobStore(clock=world.clock)
    world.pipeline = SubmissionPipeline(
        store=world.store,
        rate_limiter=world.limiter,
        challenge=world.verifier,
        clock=world.clock,
        id_source=SeededIdSource(1),
        settings=world.settings,
        blobs=store if blobs else None,
        signer=SIGNER,
    )
    return UploadWorld(world, store)


@frozen
class UploadWorld:
    world: World
    blobs: InMemoryBlobStore

    async def form(
        self,
        policy: UploadPolicy | None = None,
        *,
        monthly_limit: int | None = None,
        rules: Sequence[FieldRule] = (),
        challenge: bool = False,
    ) -> Form:
        workspace = await self.world.workspace(monthly_limit=monthly_limit)
        form = await self.world.seed.form(
            workspace.workspace_id, rules=rules, challenge=CHALLENGE if challenge else None
        )
        form = evolve(form, uploads=policy or UploadPolicy())
        await self.world.store.forms.update(form)
        return form

    async def submit(
        self,
        form: Form,
        raw: RawBody,
        *,
        key: str | None = None,
        token: str | None = None,
    ) -> Outcome:
        return await self.world.submit(
            request(public(form), raw, idempotency_key=key, challenge_token=token)
        )

    async def keys(self) -> set[str]:
        """Every blob and unfinished write in the store."""
        return {info.key async for info in self.blobs.list(older_than=FAR_FUTURE)}

    async def linked(self, form: Form) -> set[str]:
        """The keys the stored submissions link."""
        return {
            item.key
            async for submission in self.world.store.submissions.iterate(form.form_id)
            for item in submission.files
        }

    async def files_of(self, submission_id: str) -> tuple[StoredFile, ...]:
        submission = await self.world.store.submissions.get(submission_id)
        assert submission is not None
        return submission.files


def digest(content: bytes) -> str:
    return hashlib.sha256(content).hexdigest()


def refused(outcome: Outcome, code: ErrorCode) -> Refused:
    assert isinstance(outcome, Refused), outcome
    assert outcome.rejection.code is code, outcome.rejection
    return outcome


CV = Upload("cv", "cv.pdf", PDF, "application/pdf")
PHOTO = Upload("photo", "me.png", PNG, "image/png")


# --- a stored submission ---------------------------------------------------------------


async def test_a_submission_with_files_stores_them_and_links_them() -> None:
    up = build()
    form = await up.form()

    outcome = await up.submit(form, body(files=[CV, PHOTO], cuts=range(7, 2000, 97)))

    assert isinstance(outcome, Accepted), outcome
    assert outcome.status == 201
    files = await up.files_of(outcome.submission_id)
    assert files == (
        StoredFile("cv", "cv.pdf", len(PDF), "application/pdf", digest(PDF), files[0].key),
        StoredFile("photo", "me.png", len(PNG), "image/png", digest(PNG), files[1].key),
    )
    assert [f.key for f in files] == [f"{outcome.submission_id}/{i}" for i in range(2)]
    assert up.blobs.blobs[files[0].key][1] == PDF
    assert up.blobs.blobs[files[1].key][1] == PNG
    assert await up.keys() == await up.linked(form) == {f.key for f in files}
    submission = await up.world.store.submissions.get(outcome.submission_id)
    assert submission is not None
    assert submission.data == {"name": "Ada"}


async def test_the_event_lists_each_file_with_a_signed_link_that_verifies() -> None:
    up = build()
    form = await up.form()
    now = up.world.clock.now()

    outcome = await up.submit(form, body(files=[CV, PHOTO]))

    assert isinstance(outcome, Accepted)
    (row,) = up.world.store.outbox_for(outcome.submission_id)
    described = row.event.payload["files"]
    assert isinstance(described, list)
    assert [(d["field"], d["name"], d["size"], d["type"]) for d in described] == [
        ("cv", "cv.pdf", len(PDF), "application/pdf"),
        ("photo", "me.png", len(PNG), "image/png"),
    ]
    expires_at = (now + SIGNER.ttl).replace(microsecond=0)
    for index, entry in enumerate(described):
        assert entry["sha256"] == digest([PDF, PNG][index])
        assert entry["digest"] == f"sha256:{entry['sha256']}"
        assert entry["url_expires_at"] == expires_at.isoformat()
        url = urlsplit(str(entry["url"]))
        assert f"{url.scheme}://{url.netloc}" == "https://forms.example"
        assert url.path == f"/v1/files/{outcome.submission_id}/{index}"
        query = {name: values[0] for name, values in parse_qs(url.query).items()}
        assert SIGNER.verify(
            outcome.submission_id, index, query["expires"], query["signature"], now
        )
        # The link names this file only, and only until it expires.
        assert not SIGNER.verify(
            outcome.submission_id, 1 - index, query["expires"], query["signature"], now
        )
        assert not SIGNER.verify(
            outcome.submission_id,
            index,
            query["expires"],
            query["signature"],
            expires_at + timedelta(seconds=1),
        )


async def test_a_submission_without_files_to_an_upload_form_has_none() -> None:
    up = build()
    form = await up.form()

    outcome = await up.submit(form, body(files=[Upload("cv", "", b"")]))  # an empty input

    assert isinstance(outcome, Accepted)
    assert await up.files_of(outcome.submission_id) == ()
    assert up.world.store.outbox_for(outcome.submission_id)[0].event.payload["files"] == []
    assert await up.keys() == set()


async def test_a_json_body_to_an_upload_form_is_read_as_before() -> None:
    up = build(blobs=False)  # it needs no blob store either
    form = await up.form()
    raw = WireBody("application/json", encode_json({"name": "Ada"})).open()

    outcome = await up.submit(form, raw)

    assert isinstance(outcome, Accepted), outcome


async def test_a_multipart_body_without_a_file_needs_no_blob_store() -> None:
    up = build(blobs=False)  # a form that took files before a store was required for it
    form = await up.form()

    fields_only = await up.submit(form, body())
    empty_input = await up.submit(form, body(files=[Upload("cv", "", b"")]))
    refused_type = await up.submit(form, body(files=[Upload("cv", "x.exe", EXE)]))

    assert isinstance(fields_only, Accepted), fields_only
    assert isinstance(empty_input, Accepted), empty_input
    # A file the form would not take is refused for its type: it needed no store either.
    assert refused(refused_type, ErrorCode.VALIDATION_FAILED).rejection.fields == {
        "cv": TYPE_NOT_ACCEPTED
    }


async def test_a_file_to_keep_without_a_blob_store_is_a_storage_outage() -> None:
    up = build(blobs=False)
    form = await up.form()

    outcome = await up.submit(form, body(files=[CV]))

    refused(outcome, ErrorCode.SERVICE_UNAVAILABLE)
    assert [stored async for stored in up.world.store.submissions.iterate(form.form_id)] == []


async def test_a_required_file_field_holds_with_a_file_and_fails_without() -> None:
    up = build()
    form = await up.form(rules=[FieldRule("cv", RuleKind.REQUIRED)])

    with_file = await up.submit(form, body(files=[CV]))
    without = await up.submit(form, body(files=[Upload("cv", "", b"")]))
    other_field = await up.submit(form, body(files=[PHOTO]))

    assert isinstance(with_file, Accepted)
    assert refused(without, ErrorCode.VALIDATION_FAILED).rejection.fields == {
        "cv": "This field is required."
    }
    refused(other_field, ErrorCode.VALIDATION_FAILED)
    assert await up.keys() == await up.linked(form)
    assert len(await up.keys()) == 1


# --- refusals leave nothing ------------------------------------------------------------


async def _assert_only_linked_blobs(up: UploadWorld, form: Form) -> None:
    linked = await up.linked(form)
    assert await up.keys() == linked
    assert up.blobs.incoming == {}


async def test_a_filled_honeypot_keeps_no_file() -> None:
    up = build()
    form = await up.form()

    outcome = await up.submit(form, body([("name", "Ada"), ("_gotcha", "bot")], [CV, PHOTO]))

    assert isinstance(outcome, Accepted)
    assert outcome.status == 201  # the look-alike success
    assert up.world.store.count_submissions() == 0
    assert await up.keys() == set()


async def test_a_failed_challenge_keeps_no_file() -> None:
    up = build()
    form = await up.form(challenge=True)

    outcome = await up.submit(form, body(files=[CV]), token=REJECTED_TOKEN)
    missing = await up.submit(form, body(files=[CV]))
    passed = await up.submit(form, body(files=[PHOTO]), token=PASSING_TOKEN)

    refused(outcome, ErrorCode.CHALLENGE_FAILED)
    refused(missing, ErrorCode.CHALLENGE_FAILED)
    assert isinstance(passed, Accepted)
    await _assert_only_linked_blobs(up, form)
    assert len(await up.keys()) == 1


async def test_a_validation_failure_keeps_no_file() -> None:
    up = build()
    form = await up.form(rules=[FieldRule("message", RuleKind.REQUIRED)])

    outcome = await up.submit(form, body(files=[CV, PHOTO]))

    assert refused(outcome, ErrorCode.VALIDATION_FAILED).rejection.fields == {
        "message": "This field is required."
    }
    assert await up.keys() == set()


async def test_a_refused_type_fails_its_field_and_takes_the_good_files_with_it() -> None:
    up = build()
    form = await up.form()
    evil = Upload("attachment", "invoice.pdf", EXE, "application/pdf")

    outcome = await up.submit(form, body(files=[CV, evil, PHOTO]))

    refusal = refused(outcome, ErrorCode.VALIDATION_FAILED)
    assert refusal.rejection.fields == {"attachment": TYPE_NOT_ACCEPTED}
    assert refusal.step is Step.VALIDATE
    assert await up.keys() == set()


async def test_a_file_over_the_limit_is_too_large_and_the_earlier_ones_go() -> None:
    up = build()
    form = await up.form(UploadPolicy(max_file_size=len(PDF)))
    too_big = Upload("photo", "big.png", PNG + b"\x00" * len(PDF), "image/png")

    outcome = await up.submit(form, body(files=[CV, too_big], cuts=range(64, 4000, 64)))

    assert refused(outcome, ErrorCode.PAYLOAD_TOO_LARGE).step is Step.PARSE
    assert await up.keys() == set()
    assert up.blobs.incoming == {}


async def test_too_many_files_are_too_large() -> None:
    up = build()
    form = await up.form(UploadPolicy(max_files=2))

    outcome = await up.submit(form, body(files=[CV, PHOTO, CV]))

    refused(outcome, ErrorCode.PAYLOAD_TOO_LARGE)
    assert await up.keys() == set()


async def test_an_exceeded_quota_keeps_no_file() -> None:
    up = build()
    form = await up.form(monthly_limit=0)

    outcome = await up.submit(form, body(files=[CV]))

    assert refused(outcome, ErrorCode.QUOTA_EXCEEDED).step is Step.QUOTA
    assert await up.keys() == set()


async def test_a_replay_keeps_only_the_first_requests_files() -> None:
    up = build()
    form = await up.form()

    first = await up.submit(form, body(files=[CV, PHOTO]), key="key-1")
    keys = await up.keys()
    again = await up.submit(form, body(files=[CV, PHOTO], cuts=[5, 300]), key="key-1")

    assert isinstance(first, Accepted)
    assert isinstance(again, Accepted)
    assert (again.status, again.submission_id) == (200, first.submission_id)
    assert await up.keys() == keys == await up.linked(form)
    assert len(keys) == 2


class HeldCommits:
    """The store's submissions, holding every commit until `count` have begun: as a
    database running the transactions side by side, each after its request's own
    replay check found nothing."""

    def __init__(self, inner: InMemorySubmissions, count: int) -> None:
        self.inner = inner
        self.count = count
        self.all_here = asyncio.Event()
        self.results: list[CommitResult] = []

    async def commit(self, plan: CommitPlan) -> CommitResult:
        self.count -= 1
        if self.count <= 0:
            self.all_here.set()
        await self.all_here.wait()
        result = await self.inner.commit(plan)
        self.results.append(result)
        return result

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)


@pytest.mark.parametrize("at_the_commit", [False, True])
async def test_concurrent_requests_with_one_key_keep_one_requests_files(
    at_the_commit: bool,
) -> None:
    """One commits; the others replay, found at the parse or refused by the commit, and
    their files go."""
    up = build()
    form = await up.form()
    held = HeldCommits(up.world.store.submissions, 3)
    if at_the_commit:
        up.world.store.submissions = held  # type: ignore[assignment]
    data = encode([("name", "Ada")], [CV, PHOTO])
    cuts = tuple(range(100, len(data), 100))

    outcomes = await asyncio.gather(
        *(
            up.submit(form, WireBody(MULTIPART_TYPE, data, cuts).open(yield_between=True), key="k")
            for _ in range(3)
        )
    )

    accepted = [outcome for outcome in outcomes if isinstance(outcome, Accepted)]
    assert sorted(outcome.status for outcome in accepted) == [200, 200, 201], outcomes
    assert len({outcome.submission_id for outcome in accepted}) == 1
    if at_the_commit:
        assert sum(isinstance(result, IdempotencyTaken) for result in held.results) == 2
    assert up.world.store.count_submissions() == 1
    await _assert_only_linked_blobs(up, form)
    assert len(await up.keys()) == 2


async def test_the_same_key_with_another_file_content_is_a_conflict() -> None:
    up = build()
    form = await up.form()
    await up.submit(form, body(files=[CV]), key="key-1")
    keys = await up.keys()
    changed = Upload("cv", "cv.pdf", PDF + b"%EOF\n", "application/pdf")

    outcome = await up.submit(form, body(files=[changed]), key="key-1")
    no_file = await up.submit(form, body(), key="key-1")

    assert refused(outcome, ErrorCode.IDEMPOTENCY_CONFLICT).step is Step.PARSE
    refused(no_file, ErrorCode.IDEMPOTENCY_CONFLICT)
    assert await up.keys() == keys


async def test_the_same_key_with_one_more_refused_file_is_a_conflict() -> None:
    """The documented rule: a replay carries the same files; other files are a 409,
    even when one of them is a type the form would refuse."""
    up = build()
    form = await up.form()
    await up.submit(form, body(files=[CV]), key="key-1")
    evil = Upload("attachment", "invoice.pdf", EXE, "application/pdf")

    outcome = await up.submit(form, body(files=[CV, evil]), key="key-1")

    refused(outcome, ErrorCode.IDEMPOTENCY_CONFLICT)
    await _assert_only_linked_blobs(up, form)


async def test_a_form_disabled_while_the_files_arrive_keeps_none_of_them() -> None:
    up = build()
    form = await up.form()
    data = encode([("name", "Ada")], [CV, PHOTO])

    async def disabling() -> AsyncIterator[bytes]:
        # Steps 1 and 2 have passed; the commit's own check finds the form paused.
        yield data[:200]
        await up.world.store.forms.update(evolve(form, enabled=False))
        yield data[200:]

    outcome = await up.submit(form, RawBody(MULTIPART_TYPE, None, disabling()))

    assert refused(outcome, ErrorCode.FORM_DISABLED).step is Step.CHECK_ENABLED
    assert await up.keys() == set()


async def test_a_failed_commit_leaves_the_files_for_the_sweep() -> None:
    up = build()
    form = await up.form()
    up.world.store.submissions.fail_commits = 1

    outcome = await up.submit(form, body(files=[CV, PHOTO]))

    assert refused(outcome, ErrorCode.SERVICE_UNAVAILABLE).step is Step.COMMIT
    left = await up.keys()
    assert len(left) == 2  # the commit may have been stored: the files stay
    assert up.world.store.count_submissions() == 0
    # Once older than the grace period, the sweep finds no submission and removes them.
    counts = await sweep_uploads(
        up.blobs, up.world.store.submissions, up.world.clock.now() + timedelta(hours=2)
    )
    assert counts.orphans == 2
    assert await up.keys() == set()


async def test_a_blob_store_that_cannot_be_reached_is_service_unavailable() -> None:
    up = build()
    form = await up.form()
    up.blobs.unavailable = True

    outcome = await up.submit(form, body(files=[CV]))

    refused(outcome, ErrorCode.SERVICE_UNAVAILABLE)
    assert up.world.store.count_submissions() == 0


async def test_an_upload_form_without_a_blob_store_is_service_unavailable() -> None:
    up = build(blobs=False)
    form = await up.form()

    outcome = await up.submit(form, body(files=[CV]))

    assert refused(outcome, ErrorCode.SERVICE_UNAVAILABLE).rejection.retry_after is not None
    assert up.world.store.count_submissions() == 0


async def test_a_text_type_declared_as_no_mime_type_name_is_not_a_server_error() -> None:
    """A part's Content-Type is the sender's: on a form that takes any text, one that is
    no type name (a latin-1 byte, a tab) must neither reach the blob store as a content
    type nor end the request with an unhandled error."""
    up = build()
    form = await up.form(UploadPolicy(allowed_types=("text/*",)))
    notes = Upload("notes", "notes.txt", b"plain words\n", "text/\xe9")

    outcome = await up.submit(form, body(files=[notes]))

    assert isinstance(outcome, Accepted), outcome
    (stored,) = await up.files_of(outcome.submission_id)
    assert stored.content_type == "text/plain"


# --- the body deadline -----------------------------------------------------------------


async def _deadline_seen(up: UploadWorld, form: Form) -> tuple[float, float]:
    """The deadline when the reader first pulls a chunk, and after the request."""
    deadline = BodyDeadline(1000.0, 30.0)
    seen: list[float] = []
    data = encode([("name", "Ada")], [CV])

    async def chunks() -> AsyncIterator[bytes]:
        seen.append(deadline.at)
        yield data

    await up.submit(form, RawBody(MULTIPART_TYPE, None, chunks(), deadline))
    return seen[0], deadline.at


async def test_the_body_deadline_grows_to_the_upload_timeout_for_an_upload_form() -> None:
    up = build(settings=PipelineSettings(rate_limits=UNLIMITED, upload_timeout=300.0))
    form = await up.form()

    assert await _deadline_seen(up, form) == (1300.0, 1300.0)


async def test_the_body_deadline_stays_for_a_form_without_uploads() -> None:
    up = build(settings=PipelineSettings(rate_limits=UNLIMITED, upload_timeout=300.0))
    form = evolve(await up.form(), uploads=None)
    await up.world.store.forms.update(form)

    assert await _deadline_seen(up, form) == (1030.0, 1030.0)


# --- the property ----------------------------------------------------------------------

MAX_FILE = 300
POLICY = UploadPolicy(
    allowed_types=("application/pdf", "image/png", "text/plain"),
    max_file_size=MAX_FILE,
    max_total_size=700,
    max_files=3,
)


class Kind(enum.Enum):
    PDF = b"%PDF-1.7\n"
    PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"
    TEXT = b"plain text "
    EXE = b"MZ\x90\x00\x03\x00\x00\x00\x04\x00\x00\x00\xff\xff\x00\x00"
    HTML = b"<!DOCTYPE html><html><script>"
    GARBAGE = b"\x00\xff\x01\xfe"


def _content(kind: Kind, size: int, salt: int) -> bytes:
    filler = b"a" if kind is Kind.TEXT or kind is Kind.HTML else bytes([salt % 256])
    return (kind.value + filler * size)[:size]


@frozen
class Sent:
    files: tuple[Upload, ...]
    honeypot: bool
    token: str
    fail_commit: bool
    cuts: tuple[int, ...]


@st.composite
def sends(draw: st.DrawFn) -> Sent:
    files = []
    # Weighted towards requests that pass, so that stored files are common too.
    count = draw(st.sampled_from([0, 1, 1, 2, 2, 3, POLICY.max_files + 1]))
    for i in range(count):
        kind = draw(st.sampled_from([Kind.PDF, Kind.PNG, Kind.TEXT, *Kind]))
        size = draw(st.sampled_from([1, 40, 120, 0, MAX_FILE - 1, MAX_FILE, MAX_FILE + 1]))
        files.append(
            Upload(
                draw(st.sampled_from(["cv", "photo", "notes"])),
                f"{kind.name.lower()}-{i}",
                _content(kind, size, draw(st.integers(0, 255))),
                draw(st.sampled_from([None, "application/pdf", "text/plain", "image/png"])),
            )
        )
    return Sent(
        files=tuple(files),
        honeypot=draw(st.integers(0, 4)) == 0,
        token=draw(st.sampled_from([PASSING_TOKEN, PASSING_TOKEN, REJECTED_TOKEN])),
        fail_commit=draw(st.integers(0, 5)) == 0,
        cuts=tuple(draw(st.lists(st.integers(1, 2500), max_size=6))),
    )


def _expected(sent: Sent) -> ErrorCode | None:
    """The answer the request must get: None for a success (or the honeypot's)."""
    sizes = [len(item.content) for item in sent.files]
    if (
        len(sizes) > POLICY.max_files
        or any(size > POLICY.max_file_size for size in sizes)
        or sum(sizes) > POLICY.max_total_size
    ):
        return ErrorCode.PAYLOAD_TOO_LARGE
    if sent.honeypot:
        return None
    if sent.token != PASSING_TOKEN:
        return ErrorCode.CHALLENGE_FAILED
    if any(
        not POLICY.allows(sniff(item.content, item.declared, complete=True)) for item in sent.files
    ):
        return ErrorCode.VALIDATION_FAILED
    if sent.fail_commit:
        return ErrorCode.SERVICE_UNAVAILABLE
    return None


async def _run(story: list[Sent]) -> None:
    up = build()
    form = await up.form(POLICY, challenge=True)
    orphans: set[str] = set()

    for sent in story:
        fields = [("name", "Ada"), *([("_gotcha", "bot")] if sent.honeypot else [])]
        up.world.store.submissions.fail_commits = 1 if sent.fail_commit else 0
        before = await up.keys()

        outcome = await up.submit(form, body(fields, sent.files, cuts=sent.cuts), token=sent.token)

        up.world.store.submissions.fail_commits = 0
        expected = _expected(sent)
        event(f"answer: {expected.value if expected else 'accepted'}")
        if expected is None:
            assert isinstance(outcome, Accepted), (outcome, sent)
        else:
            refused(outcome, expected)
        added = await up.keys() - before
        if expected is ErrorCode.SERVICE_UNAVAILABLE:
            # The files of a commit that failed stay, for the sweep to check.
            assert len(added) == len(sent.files)
            orphans |= added
        elif isinstance(outcome, Accepted) and not sent.honeypot:
            stored = await up.files_of(outcome.submission_id)
            event(f"stored {len(stored)} files")
            assert [(f.field, f.name, f.size, f.sha256) for f in stored] == [
                (u.field, u.filename, len(u.content), digest(u.content)) for u in sent.files
            ]
            for item, upload in zip(stored, sent.files, strict=True):
                assert up.blobs.blobs[item.key][1] == upload.content
            assert added == {f.key for f in stored}
        else:
            assert added == set()
        assert up.blobs.incoming == {}
        assert await up.keys() == await up.linked(form) | orphans

    counts = await sweep_uploads(
        up.blobs, up.world.store.submissions, up.world.clock.now() + timedelta(hours=2)
    )
    assert counts.orphans == len(orphans)
    assert await up.keys() == await up.linked(form)


@given(st.lists(sends(), min_size=1, max_size=8))
def test_the_blobs_are_exactly_the_files_of_the_stored_submissions(story: list[Sent]) -> None:
    asyncio.run(_run(story))


@given(st.lists(st.integers(1, 5000), max_size=30))
def test_stored_files_are_whole_wherever_the_body_is_cut(cuts: list[int]) -> None:
    async def run() -> None:
        up = build()
        form = await up.form()
        large = Upload("cv", "large.pdf", PDF + bytes(range(256)) * 40, "application/pdf")
        outcome = await up.submit(form, body(files=[large, PHOTO], cuts=cuts))
        assert isinstance(outcome, Accepted), outcome
        files = await up.files_of(outcome.submission_id)
        assert [up.blobs.blobs[f.key][1] for f in files] == [large.content, PNG]

    asyncio.run(run())
