"""A hostile template does not freeze the service: while several previews of runaway
templates are rendering on a real `intake serve`, /healthz keeps answering, and every
preview ends in a 422 naming the template. Rendering happens in worker processes, off
the server's event loop."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from tests.support.processes import ServedProcess, clean_env, run_cli

pytestmark = pytest.mark.slow

RUNAWAY = [
    "{% set x = (((9**64)**64)**64)**64 %}{{ x > 1 }}",
    '{% for a in "x" * 100000 %}{% for b in "x" * 100000 %}{% endfor %}{% endfor %}',
    '{% set a = "x" * 100000 %}{{ (a ~ a ~ a ~ a)|length }}',
    "{% macro m(n) %}{{ m(n + 1) }}{% endmacro %}{{ m(1) }}",
]
# Generous on a busy host: without the workers, one such preview took minutes.
ANSWER_WITHIN = 30.0


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return clean_env(INTAKE_DATABASE_URL=f"sqlite:///{tmp_path / 'intake.db'}")


@pytest.fixture
def server(env: dict[str, str], tmp_path: Path) -> Iterator[str]:
    with ServedProcess(env, tmp_path / "serve.log", stop_signal=signal.SIGINT) as served:
        yield served.base


def test_healthz_answers_while_runaway_templates_render(env: dict[str, str], server: str) -> None:
    workspace = run_cli(env, "workspace", "create", "--name", "E2E")["workspace_id"]
    form = run_cli(env, "form", "create", "--workspace", workspace)["form_id"]
    key = run_cli(env, "key", "create", "--workspace", workspace, "--scope", "manage")
    headers = {"authorization": f"Bearer {key['api_key']}"}

    def preview(source: str) -> httpx.Response:
        return httpx.post(
            f"{server}/v1/forms/{form}/templates/preview",
            json={"templates": {"notification_text": source}},
            headers=headers,
            timeout=ANSWER_WITHIN * 4,
        )

    with ThreadPoolExecutor(max_workers=len(RUNAWAY) * 2) as pool:
        previews = [pool.submit(preview, source) for source in RUNAWAY * 2]
        health = [
            httpx.get(f"{server}/healthz", timeout=ANSWER_WITHIN).status_code for _ in range(5)
        ]
        answers = [future.result() for future in previews]

    assert health == [200] * 5
    for answer in answers:
        assert answer.status_code == 422, answer.text
        assert "templates.notification_text" in answer.json()["error"]["fields"]
