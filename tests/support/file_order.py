"""The order in which xdist deals the test files to its workers: longest first.

Under `--dist loadfile` each file goes to one worker whole, in the order the workers
collected the files, which xdist sorts by how many tests each file holds. The longest
files are few tests that each start servers or processes (the bench, e2e, the hostile
suite): dealt last, one worker was still running them long after the others had
finished. Here the files are dealt longest first, each file's length being what its
tests took in earlier runs (kept in pytest's cache, `.pytest_cache`), or for a test not
timed yet what a test of its file took in a measured run: the rule of
longest-processing-time first, which keeps the workers' ends close together.

A clean clone has no cache. For it, `file_seconds.json` beside this module holds what a
test of each file took on average in a whole run (`make test`), its tests marked `slow`
apart from the others: a file or a kind of test it does not name is guessed from the
marks (SLOW_GUESS, GUESS). To refresh it, run the whole suite with `--record-file-seconds`
(`.venv/bin/pytest -m "not faults" -n 3 --dist loadfile --record-file-seconds`); a run of
some files updates theirs alone.

The controller reads the times once and hands the same ones to every worker, whose
orders must agree; it records this run's times for the next. A run without xdist keeps
the collection order (a package's fixtures are then set up once).

A worker sets a package's fixtures up again each time it comes back to the package after
another package's file. The browser package's are a browser, its driver and the services
it visits, seconds of CPU each time: when a run holds other tests too, the package is
one unit, dealt to one worker whole, its files in the same order. A run of the package
alone deals its files.
"""

from __future__ import annotations

import functools
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from xdist.scheduler import LoadFileScheduling

DURATIONS = "intake/test-seconds"  # the cache's key: {node id: seconds}
# {file: {"slow" or "other": seconds a test of the file took, on average}}, committed.
FILE_SECONDS = Path(__file__).with_name("file_seconds.json")
RECORD_OPTION = "--record-file-seconds"
# What a test not timed yet, of a file or kind the file above does not name, is taken to
# last: a test marked `slow` starts servers or processes, and the others take some
# hundredths of a second.
SLOW_GUESS = 10.0
GUESS = 0.05
# Packages whose fixtures cost a worker seconds each time they are set up.
WHOLE_PACKAGES = ("tests/browser/",)


def _file(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def _kind(slow: bool) -> str:
    return "slow" if slow else "other"


@functools.cache
def _measured() -> dict[str, dict[str, float]]:
    try:
        measured: dict[str, dict[str, float]] = json.loads(FILE_SECONDS.read_text())
    except FileNotFoundError:
        return {}
    return measured


def _guess(nodeid: str, slow: bool) -> float:
    """What a test not timed in this checkout is taken to last."""
    by_kind = _measured().get(_file(nodeid), {})
    return by_kind.get(_kind(slow), SLOW_GUESS if slow else GUESS)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        RECORD_OPTION,
        action="store_true",
        help=f"write what the run's tests took, by file, into {FILE_SECONDS.name}",
    )


class LongestFilesFirst:
    def __init__(self, config: pytest.Config) -> None:
        self._config = config
        self._timed: dict[str, float] = {}
        self._slow: set[str] = set()  # the timed tests marked `slow`
        worker_input: dict[str, Any] | None = getattr(config, "workerinput", None)
        self._worker = worker_input is not None
        if worker_input is not None:
            self._known: dict[str, float] = worker_input.get(DURATIONS, {})
            return
        cache = getattr(config, "cache", None)
        self._known = dict(cache.get(DURATIONS, {})) if cache is not None else {}
        # xdist would sort the files by their number of tests again, over this order.
        if hasattr(config.option, "loadscopereorder"):
            config.option.loadscopereorder = False

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any) -> Any:
        """On the controller: `--dist loadfile`, with the packages above dealt whole."""
        if config.getvalue("dist") != "loadfile":
            return None
        return _FilesAndWholePackages(config, log)

    @pytest.hookimpl(optionalhook=True)  # xdist's hook: a run without xdist has none
    def pytest_configure_node(self, node: Any) -> None:
        """On the controller, for each worker it starts."""
        node.workerinput[DURATIONS] = self._known

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        if not self._worker:
            return
        seconds: defaultdict[str, float] = defaultdict(float)
        for item in items:
            known = self._known.get(item.nodeid)
            if known is None:
                known = _guess(item.nodeid, item.get_closest_marker("slow") is not None)
            seconds[_file(item.nodeid)] += known
        # A stable sort by the file alone: each file's tests stay together, in order.
        items.sort(key=lambda item: -seconds[_file(item.nodeid)])

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if not self._worker:  # the controller hears every worker's reports
            self._timed[report.nodeid] = self._timed.get(report.nodeid, 0.0) + report.duration
            if "slow" in report.keywords:
                self._slow.add(report.nodeid)

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        cache = getattr(self._config, "cache", None)
        if self._worker or cache is None or not self._timed:
            return
        root = self._config.rootpath
        kept = {
            nodeid: seconds
            for nodeid, seconds in self._known.items()
            if (root / Path(_file(nodeid))).exists()  # not a test since deleted
        }
        kept.update((nodeid, round(seconds, 3)) for nodeid, seconds in self._timed.items())
        cache.set(DURATIONS, kept)
        if self._config.getoption(RECORD_OPTION):
            _record(self._timed, self._slow, root)


def _record(timed: dict[str, float], slow: set[str], root: Path) -> None:
    """FILE_SECONDS with the files and kinds this run timed replaced by this run's
    averages, and those it did not run kept (if their files still exist)."""
    runs: defaultdict[tuple[str, str], list[float]] = defaultdict(list)
    for nodeid, seconds in timed.items():
        runs[_file(nodeid), _kind(nodeid in slow)].append(seconds)
    measured = {
        file: dict(by_kind) for file, by_kind in _measured().items() if (root / file).exists()
    }
    for (file, kind), times in runs.items():
        measured.setdefault(file, {})[kind] = _rounded(sum(times) / len(times))
    lines = [
        f"{json.dumps(file)}: {json.dumps(dict(sorted(measured[file].items())))}"
        for file in sorted(measured)
    ]
    FILE_SECONDS.write_text("{\n" + ",\n".join(lines) + "\n}\n")  # a line per file


def _rounded(seconds: float) -> float:
    """Two significant figures: enough to order the files, and a refresh touches only
    the lines whose figure moved."""
    return float(f"{seconds:.2g}")


class _FilesAndWholePackages(LoadFileScheduling):  # type: ignore[misc]  # xdist is untyped
    """xdist's unit is a file, or one of WHOLE_PACKAGES when the run holds other tests."""

    @functools.cached_property
    def _whole(self) -> tuple[str, ...]:
        collected: list[str] = self.collection
        return tuple(
            package
            for package in WHOLE_PACKAGES
            if not all(nodeid.startswith(package) for nodeid in collected)
        )

    def _split_scope(self, nodeid: str) -> str:
        return next((p for p in self._whole if nodeid.startswith(p)), _file(nodeid))
