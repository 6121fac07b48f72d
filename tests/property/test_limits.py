"""The payload limits (decisions.md "Payload") hold to the byte in every format: a payload
exactly at a limit is taken, one unit past it is 413 payload_too_large."""

from __future__ import annotations

import asyncio

from hypothesis import given
from hypothesis import strategies as st

from intake.domain.errors import ErrorCode
from intake.domain.steps import Step
from intake.service.messages import Accepted, Outcome, Refused
from intake.service.pipeline import PipelineSettings
from tests.property.strategies import LIMITS, LimitCase, Sendable, WireBody, limit_cases, open_body
from tests.property.world import World, public, request


async def _submit(body: Sendable) -> Outcome:
    world = World.build(PipelineSettings())
    workspace = await world.workspace()
    form = await world.seed.form(workspace.workspace_id)
    return await world.submit(request(public(form), open_body(body)))


def _over_the_body_limit(body: Sendable) -> bool:
    """Percent-encoded text can pass the body limit while every text limit holds."""
    return isinstance(body, WireBody) and len(body.data) > LIMITS.max_body


@given(limit_cases(), st.booleans())
def test_a_payload_at_a_limit_is_taken_and_one_past_it_is_too_large(
    case: LimitCase, declare_length: bool
) -> None:
    body = case.body()
    if isinstance(body, WireBody) and declare_length:
        body = WireBody(body.content_type, body.data, declared=len(body.data))

    outcome = asyncio.run(_submit(body))

    if case.over or _over_the_body_limit(body):
        assert isinstance(outcome, Refused), case
        assert outcome.rejection.code is ErrorCode.PAYLOAD_TOO_LARGE
        declared_too_long = isinstance(body, WireBody) and body.declared is not None
        expected = (
            Step.CONTENT_TYPE_AND_SIZE
            if declared_too_long and _over_the_body_limit(body)
            else Step.PARSE
        )
        assert outcome.step is expected
    else:
        assert isinstance(outcome, Accepted), (case, outcome)


@given(
    st.sampled_from(
        ["multipart/form-data", "multipart/form-data; boundary=", "Multipart/Form-Data"]
    ),
    st.sampled_from([LIMITS.max_body + 1, LIMITS.max_multipart_body + 1, 2**40]),
)
def test_a_declared_length_over_the_limit_is_refused_before_the_body_is_parsed(
    content_type: str, declared: int
) -> None:
    """A multipart type without a boundary cannot be parsed (step 6), but a declared
    length over the limit is refused first (step 5), without reading a byte."""
    body = WireBody(content_type, b"--x\r\n", declared=declared)

    outcome = asyncio.run(_submit(body))

    assert isinstance(outcome, Refused)
    if declared > LIMITS.max_multipart_body:
        expected = (ErrorCode.PAYLOAD_TOO_LARGE, Step.CONTENT_TYPE_AND_SIZE)
    else:  # within the multipart ceiling, so the missing boundary is what is wrong
        expected = (ErrorCode.MALFORMED_REQUEST, Step.PARSE)
    assert (outcome.rejection.code, outcome.step) == expected
