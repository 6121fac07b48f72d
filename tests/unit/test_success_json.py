"""The answer to an accepted submission, written from a template: byte for byte what
json.dumps makes of its body, sent as the Starlette Response it stands for would send it."""

from __future__ import annotations

import asyncio
import json

import pytest
from starlette.types import ASGIApp, Message

from intake.entrypoints.http.rendering import AcceptedJson, _json, success_body, success_json


@pytest.mark.parametrize(
    "submission_id", ["sub_01JDX5Q8Z3K7M2N4P6R8T0V2W4", "", 'a"b\\c', "\u00e9\u2028\n\x00"]
)
def test_the_success_template_writes_what_json_dumps_writes(submission_id: str) -> None:
    expected = json.dumps(success_body(submission_id), ensure_ascii=False, separators=(",", ":"))

    assert success_json(submission_id) == expected.encode("utf-8")
    assert json.loads(success_json(submission_id))["submission_id"] == submission_id


async def _messages(app: ASGIApp) -> list[Message]:
    sent: list[Message] = []

    async def receive() -> Message:
        raise AssertionError("an answer reads nothing")

    async def send(message: Message) -> None:
        sent.append(message)

    await app({"type": "http", "method": "POST"}, receive, send)
    return sent


@pytest.mark.parametrize("replayed", [False, True])
@pytest.mark.parametrize("submission_id", ["sub_01JDX5Q8Z3K7M2N4P6R8T0V2W4", "\u00e9\u2028"])
def test_an_accepted_answer_sends_what_its_starlette_response_would(
    submission_id: str, replayed: bool
) -> None:
    """AcceptedJson stands for the Response `_json` made: the same status, headers in
    the same order, and body."""
    status = 200 if replayed else 201
    headers = {"Idempotent-Replayed": "true"} if replayed else {}
    made = _json(success_json(submission_id), status, headers)

    sent = asyncio.run(_messages(AcceptedJson(submission_id, status, replayed=replayed)))

    assert sent == asyncio.run(_messages(made))
