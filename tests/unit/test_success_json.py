"""The answer to an accepted submission, written from a template: byte for byte what
json.dumps makes of its body."""

from __future__ import annotations

import json

import pytest

from intake.entrypoints.http.rendering import success_body, success_json


@pytest.mark.parametrize(
    "submission_id", ["sub_01JDX5Q8Z3K7M2N4P6R8T0V2W4", "", 'a"b\\c', "\u00e9\u2028\n\x00"]
)
def test_the_success_template_writes_what_json_dumps_writes(submission_id: str) -> None:
    expected = json.dumps(success_body(submission_id), ensure_ascii=False, separators=(",", ":"))

    assert success_json(submission_id) == expected.encode("utf-8")
    assert json.loads(success_json(submission_id))["submission_id"] == submission_id
