"""docs/snippets/server_side.py run as it is, as a process, against the live service."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest

from tests.browser.conftest import SNIPPETS, Service

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SCRIPT = SNIPPETS / "server_side.py"


def _run(
    service: Service, form_id: str, api_key: str, order: str
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("INTAKE_")}
    env.update(INTAKE_URL=service.base, INTAKE_FORM_ID=form_id, INTAKE_API_KEY=api_key)
    return subprocess.run(
        [sys.executable, str(SCRIPT), order],
        env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip


def _answer(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    answer = json.loads(done.stdout)
    assert isinstance(answer, dict)
    return answer


@pytest.fixture(scope="module")
def orders(service: Service, workspace_id: str) -> tuple[str, str]:
    """A protected form (reachable only with an API key) and a key of its workspace."""
    form = service.create_form(workspace_id, "--name", "Orders", "--mode", "protected")
    api_key = service.intake("key", "create", "--workspace", workspace_id)["api_key"]
    return form["form_id"], api_key


def test_the_snippet_submits_once_however_often_it_is_run(
    service: Service, orders: tuple[str, str]
) -> None:
    form_id, api_key = orders

    first = _run(service, form_id, api_key, "1001")
    again = _run(service, form_id, api_key, "1001")

    assert first.returncode == 0, first.stderr
    assert again.returncode == 0, again.stderr
    assert _answer(first)["ok"] is True
    # The same order sends the same Idempotency-Key: the original answer, nothing new.
    assert _answer(again) == _answer(first)
    stored = service.submissions(form_id)
    assert [s["submission_id"] for s in stored] == [_answer(first)["submission_id"]]
    assert stored[0]["subject"] == "Order 1001"
    assert stored[0]["data"] == {
        "email": "customer@example.com",
        "message": "Order 1001 was placed.",
        "items": ["tea", "cups"],
    }


def test_the_snippet_reports_a_refusal_and_exits_with_an_error(
    service: Service, orders: tuple[str, str]
) -> None:
    form_id, _ = orders
    unknown_key = "intake_sk_" + "0" * 32  # well formed, but no such key was ever made

    done = _run(service, form_id, unknown_key, "1002")

    assert done.returncode == 1
    assert _answer(done)["error"]["code"] == "unauthorized"
    assert done.stderr.startswith("unauthorized: This endpoint requires a valid API key. (req_")
    assert all(s["subject"] != "Order 1002" for s in service.submissions(form_id))
