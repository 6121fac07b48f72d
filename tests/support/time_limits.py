"""Every test runs under a time limit, so that a regression that hangs fails the run
instead of stalling it. tests/conftest.py brings these hooks in.

pytest-timeout sets the limit: `timeout` in pyproject.toml, SLOW_TIMEOUT for a test
marked `slow`, or the test's own @pytest.mark.timeout(N). Past it, SIGALRM fails the
test and the run goes on. Python handles a signal in the main thread only, between two
bytecodes, so a test whose work runs in another thread (the TestClient's app) and holds
the GIL in one long C call (a huge `**`), or whose cleanup hangs after the failure,
would still hang. faulthandler's watchdog is a C thread that needs no GIL: TIMEOUT_GRACE
after the limit it prints every thread's stack and ends the process. Without xdist the
run ends there, failed. Under xdist the test is reported failed and a new worker takes
over; as `--dist loadfile` hands the file's unfinished tests, that one included, to the
next worker, each worker notes the test it runs, and a test that ended a worker before
fails at once instead of ending the next one.
"""

from __future__ import annotations

import faulthandler
import os
import tempfile
from contextlib import suppress
from pathlib import Path
from typing import Any

import pytest
from pytest_timeout import is_debugging

# A test marked `slow` starts servers, processes or a browser, which a loaded machine
# takes a while to bring up.
SLOW_TIMEOUT = 300
TIMEOUT_GRACE = 60.0

# The stacks go to the run's own stderr, not to a test's captured output (lost with the
# process): a copy of it made before any test captures it.
_WATCHDOG_OUTPUT = pytest.StashKey[int]()
# Under xdist: a directory of the run's, holding a file per worker process (named by its
# pid) with the test it runs.
_RUNNING = pytest.StashKey[Path | None]()


def pytest_configure(config: pytest.Config) -> None:
    config.stash[_WATCHDOG_OUTPUT] = os.dup(2)
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    where = Path(tempfile.gettempdir()) / f"intake-tests-running-{run}"
    config.stash[_RUNNING] = where if run else None


def pytest_unconfigure(config: pytest.Config) -> None:
    running = config.stash.get(_RUNNING, None)
    if running is not None:
        with suppress(OSError):
            running.rmdir()  # by the last worker to end; a note of a crash keeps it


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("slow") and not item.get_closest_marker("timeout"):
            item.add_marker(pytest.mark.timeout(SLOW_TIMEOUT))


def pytest_timeout_set_timer(item: pytest.Item, settings: Any) -> None:
    """Arms the watchdog beside pytest-timeout's own timer (this returns None, so that
    pytest-timeout's implementation sets that too)."""
    if item.config.getoption("usepdb") or is_debugging():
        return  # a developer at a debugger's prompt is not a hang
    running = item.config.stash[_RUNNING]
    if running is not None:
        running.mkdir(exist_ok=True)
        (running / str(os.getpid())).write_text(item.nodeid)
    faulthandler.dump_traceback_later(
        float(settings.timeout) + TIMEOUT_GRACE,
        exit=True,
        file=item.config.stash[_WATCHDOG_OUTPUT],
    )


def pytest_timeout_cancel_timer(item: pytest.Item) -> None:
    faulthandler.cancel_dump_traceback_later()
    running = item.config.stash[_RUNNING]
    if running is not None:
        (running / str(os.getpid())).unlink(missing_ok=True)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    running = item.config.stash[_RUNNING]
    if running is None:
        return
    for note in running.glob("[0-9]*"):
        pid = int(note.name)
        if pid == os.getpid() or _alive(pid):
            continue
        with suppress(FileNotFoundError):
            if note.read_text() == item.nodeid:
                note.unlink()
                pytest.fail(
                    f"{item.nodeid} ended its test process at its time limit (the stacks"
                    " were printed then); not run again",
                    pytrace=False,
                )


def _alive(pid: int) -> bool:
    """Whether the process runs (a worker that ended may stay a zombie until xdist reaps
    it)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except (OSError, IndexError):
        return False
    return state not in {"Z", "X"}
