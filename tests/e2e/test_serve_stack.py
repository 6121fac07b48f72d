"""The event loop and HTTP parser `intake serve` runs on: uvloop and httptools by default,
h11 when INTAKE_HTTP_PROTOCOL asks for it. Told from the native libraries the worker
loaded (uvicorn imports uvloop and httptools only to use them); h11 is pure Python, so
a worker on h11 is one that loaded no httptools."""

from __future__ import annotations

from pathlib import Path

import psutil
import pytest

from tests.support.processes import ServedProcess, clean_env

pytestmark = pytest.mark.slow


def _loaded(pid: int) -> set[str]:
    return {mapped.path for mapped in psutil.Process(pid).memory_maps(grouped=True)}


def _served_stack(tmp_path: Path, **env: str) -> tuple[bool, bool]:
    """Whether the worker loaded uvloop, and httptools."""
    settings = clean_env(
        INTAKE_DATABASE_URL=f"sqlite:///{tmp_path / 'intake.db'}",
        INTAKE_LOG_LEVEL="warning",
        **env,
    )
    with ServedProcess(settings, tmp_path / "serve.log") as served:
        loaded = _loaded(served.pid)
    return any("/uvloop/" in p for p in loaded), any("/httptools/" in p for p in loaded)


def test_intake_serve_runs_on_uvloop_and_httptools_by_default(tmp_path: Path) -> None:
    assert _served_stack(tmp_path) == (True, True)


def test_h11_serves_when_asked_for_on_the_same_loop(tmp_path: Path) -> None:
    assert _served_stack(tmp_path, INTAKE_HTTP_PROTOCOL="h11") == (True, False)
