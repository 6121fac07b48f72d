"""Property 7: nothing a client sends makes submit() raise. Arbitrary bytes under any
content type, and arbitrary Content-Type, Idempotency-Key, Origin, challenge-token and
Authorization values, end in an Accepted or a Refused whose code is one its step may
answer with; a success is stored whole or (the honeypot) not at all."""

from __future__ import annotations

import asyncio
import re

from attrs import frozen
from hypothesis import event, example, given
from hypothesis import strategies as st

from intake.domain.errors import ERRORS, ErrorCode
from intake.domain.model import FieldData, FieldRule, RuleKind
from intake.domain.steps import STEP_CODES
from intake.service.messages import Accepted, FieldsBody, Outcome, Refused, ServerTarget
from intake.service.pipeline import PipelineSettings
from tests.property.strategies import (
    BOUNDARY,
    CHARSETS,
    SUPPORTED_MIMES,
    Endpoint,
    Sendable,
    WireBody,
    any_text_headers,
    encode_multipart,
    hostile_bodies,
    idempotency_keys,
    json_documents,
    open_body,
    origins,
)
from tests.property.world import (
    ALLOWED_ORIGIN,
    CHALLENGE,
    FLAKY_TOKEN,
    PASSING_TOKEN,
    REJECTED_TOKEN,
    Snapshot,
    World,
    public,
    request,
)

SUBMISSION_ID = re.compile(r"^sub_[0-9a-hjkmnp-tv-z]{29}$")
RULES = (
    FieldRule("name", RuleKind.REQUIRED),
    FieldRule("email", RuleKind.EMAIL),
    FieldRule("website", RuleKind.URL),
    FieldRule("age", RuleKind.NUMBER),
    FieldRule("message", RuleKind.MAX_LENGTH, 10),
)
VALID_KEY = "<the workspace's API key>"  # replaced by the real secret in the world


@frozen
class Hostile:
    endpoint: Endpoint
    body: Sendable
    idempotency_key: str | None
    origin: str | None
    challenge_token: str | None
    authorization: str | None
    origin_list: bool
    challenge: bool
    rules: tuple[FieldRule, ...]


def _headers_of(good: st.SearchStrategy[str]) -> st.SearchStrategy[str | None]:
    """Half the time a value that passes, so that the request gets further."""
    return st.one_of(good, st.one_of(st.none(), any_text_headers(), st.text(max_size=30)))


@st.composite
def hostile_requests(draw: st.DrawFn, bodies: st.SearchStrategy[Sendable]) -> Hostile:
    return Hostile(
        # Mostly public: most hostile traffic comes without a key.
        endpoint=draw(st.sampled_from([Endpoint.PUBLIC, Endpoint.PUBLIC, Endpoint.SERVER])),
        body=draw(bodies),
        idempotency_key=draw(_headers_of(idempotency_keys())),
        origin=draw(st.just(ALLOWED_ORIGIN) | origins()),
        challenge_token=draw(
            _headers_of(st.sampled_from([PASSING_TOKEN, FLAKY_TOKEN, REJECTED_TOKEN]))
        ),
        authorization=draw(
            _headers_of(st.sampled_from([f"Bearer {VALID_KEY}", f"bearer  {VALID_KEY} "]))
        ),
        origin_list=draw(st.sampled_from([False, False, True])),
        challenge=draw(st.booleans()),
        rules=tuple(draw(st.lists(st.sampled_from(RULES), unique=True))),
    )


@st.composite
def raw_bodies(draw: st.DrawFn) -> Sendable:
    content_type, data = draw(hostile_bodies())
    size = len(data)
    cuts = tuple(draw(st.lists(st.integers(0, size), max_size=4)))
    declared = draw(st.none() | st.just(size) | st.integers(0, 2**40))
    return WireBody(content_type, data, cuts, declared)


def fields_bodies() -> st.SearchStrategy[Sendable]:
    def as_body(document: dict[str, object]) -> Sendable:
        fields: FieldData = document  # type: ignore[assignment]  # JSON values are FieldValues
        return FieldsBody(fields)

    return json_documents().map(as_body)


def assert_well_formed(outcome: Outcome, before: Snapshot, after: Snapshot) -> None:
    if isinstance(outcome, Refused):
        rejection = outcome.rejection
        event(f"refused: {rejection.code.value} at {outcome.step.name}")
        assert rejection.code in STEP_CODES[outcome.step], (rejection.code, outcome.step)
        assert rejection.status == ERRORS[rejection.code].status
        assert (rejection.fields is not None) == (rejection.code is ErrorCode.VALIDATION_FAILED)
        if rejection.code in (ErrorCode.RATE_LIMITED, ErrorCode.SERVICE_UNAVAILABLE):
            assert rejection.retry_after is not None
            assert rejection.retry_after >= 1
        assert after == before, "a refusal stores nothing"
        return
    assert isinstance(outcome, Accepted)
    event(f"accepted: {outcome.status}")
    assert SUBMISSION_ID.match(outcome.submission_id)
    if outcome.replayed:
        assert after == before, "a replay stores nothing"
    elif after.submissions == before.submissions:  # the honeypot's look-alike
        assert after.kept == before.kept
    else:
        assert (after.submissions, after.outbox) == (before.submissions + 1, before.outbox + 1)


async def _send_twice(hostile: Hostile) -> None:
    """The same request twice: the second meets the first's rate-limit hit and, when the
    first committed under a key, its idempotency record."""
    world = World.build(PipelineSettings())
    workspace = await world.workspace()
    form = await world.seed.form(
        workspace.workspace_id,
        allowed_origins=[ALLOWED_ORIGIN] if hostile.origin_list else [],
        challenge=CHALLENGE if hostile.challenge else None,
        rules=hostile.rules,
    )
    secret = (await world.seed.key(workspace.workspace_id)).secret
    authorization = (
        None if hostile.authorization is None else hostile.authorization.replace(VALID_KEY, secret)
    )
    key = hostile.idempotency_key
    first: Outcome | None = None
    for _ in range(2):
        target = (
            public(form)
            if hostile.endpoint is Endpoint.PUBLIC
            else ServerTarget(form.form_id, authorization)
        )
        before = await world.snapshot([workspace], [form], key)
        outcome = await world.submit(
            request(
                target,
                open_body(hostile.body),
                origin=hostile.origin,
                idempotency_key=key,
                challenge_token=hostile.challenge_token,
            )
        )
        after = await world.snapshot([workspace], [form], key)
        assert_well_formed(outcome, before, after)
        if isinstance(first, Accepted) and key is not None:  # a success or a look-alike
            assert isinstance(outcome, Accepted), outcome
            assert (outcome.status, outcome.submission_id) == (200, first.submission_id)
        first = outcome


@given(hostile_requests(raw_bodies()))
def test_arbitrary_bodies_and_headers_never_make_submit_raise(hostile: Hostile) -> None:
    asyncio.run(_send_twice(hostile))


@given(hostile_requests(fields_bodies()))
def test_arbitrary_fields_handed_over_in_process_never_make_submit_raise(
    hostile: Hostile,
) -> None:
    asyncio.run(_send_twice(hostile))


CHARSET_PROBES = (
    b"xn--zz=1&a=%FF",
    b'{"xn--zz": "caf\\u00e9"}',
    encode_multipart([("xn--zz", "xn--zz"), ("name", "Ada")]),
    b"\xff\xfe{\x00}\x00",
)


@given(st.sampled_from(SUPPORTED_MIMES), st.sampled_from(CHARSETS), st.sampled_from(CHARSET_PROBES))
@example("application/json", "idna", CHARSET_PROBES[1])
@example("application/x-www-form-urlencoded", "punycode", CHARSET_PROBES[0])
@example("multipart/form-data", "base64", CHARSET_PROBES[2])
@example("multipart/form-data", "rot13", CHARSET_PROBES[2])
def test_any_charset_parameter_is_read_or_refused_at_its_step(
    mime: str, charset: str, data: bytes
) -> None:
    boundary = f"; boundary={BOUNDARY}" if mime == "multipart/form-data" else ""
    body = WireBody(f"{mime}{boundary}; charset={charset}", data)

    async def scenario() -> None:
        world = World.build(PipelineSettings())
        workspace = await world.workspace()
        form = await world.seed.form(workspace.workspace_id)
        before = await world.snapshot([workspace], [form])
        outcome = await world.submit(request(public(form), open_body(body)))
        assert_well_formed(outcome, before, await world.snapshot([workspace], [form]))

    asyncio.run(scenario())
