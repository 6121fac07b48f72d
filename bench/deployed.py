"""intake as a deployment runs it: installed from this checkout, not editable, with its
run dependencies alone, in a virtual environment outside the repository
(~/.cache/intake-bench/deployed/, one for each checkout).

The development install that `make install` makes holds the test tools too, and some of
intake's dependencies import more when those are there: dependency-injector imports
pydantic, PyYAML, python-dotenv and werkzeug wherever they are installed. A server or a
command measured there holds and loads more than a deployment's.

The environment is kept between runs. It is made again, dependencies and all, when the
dependencies pyproject.toml declares or the interpreter change; otherwise only intake is
installed again, and only when its sources changed. The install builds a wheel: its
native modules are compiled in the build's scratch directory, never beside the sources.
"""

from __future__ import annotations

import enum
import fcntl
import functools
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from attrs import frozen

from bench.subjects import log

ROOT = Path(__file__).resolve().parent.parent
HOME = Path.home() / ".cache" / "intake-bench" / "deployed"
STATE = "bench-install.json"
# What the wheel is built from, besides src/: the metadata and the native build hook.
BUILD_FILES = ("pyproject.toml", "hatch_build.py", "README.md")
# Left by a build or a run beside the sources, and in no wheel.
NOT_SOURCES = ("__pycache__",)
NOT_SOURCE_SUFFIXES = (".pyc", ".so")
# Variables that would have an installed intake compile its modules again elsewhere, or
# at every start, rather than load the bytecode its install compiled. (The caller's
# PYTHONPATH is left out of every server's environment: bench/environments.py.)
BYTECODE_VARIABLES = ("PYTHONPYCACHEPREFIX", "PYTHONDONTWRITEBYTECODE")
INSTALL_TIMEOUT = 900  # seconds: a first install downloads and builds every dependency

Runner = Callable[[Sequence[str]], None]


class DeployedError(RuntimeError):
    """The environment could not be made or intake not installed in it."""


class Step(enum.Enum):
    REUSE = "reused as it was"
    REINSTALL = "intake installed again (its sources changed)"
    CREATE = "made, with intake's run dependencies"


@frozen
class Install:
    """The `intake` command of an install, and what the bench says it measured."""

    intake: str
    description: str
    deployed: bool

    def env(self, env: Mapping[str, str]) -> dict[str, str]:
        """`env` for this install's processes: a deployed intake runs from the bytecode
        its install compiled."""
        if not self.deployed:
            return dict(env)
        return {k: v for k, v in env.items() if k not in BYTECODE_VARIABLES}


def dependencies_key(root: Path, version: str = sys.version) -> str:
    """What the environment's dependencies follow: those pyproject.toml declares for
    running, and the interpreter."""
    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    declared = {
        "dependencies": sorted(project.get("dependencies", [])),
        "requires-python": project.get("requires-python"),
        "python": version,
    }
    return hashlib.sha256(json.dumps(declared, sort_keys=True).encode()).hexdigest()


def source_files(root: Path) -> Iterator[Path]:
    for name in BUILD_FILES:
        if (root / name).is_file():
            yield root / name
    for folder, dirs, files in os.walk(root / "src"):
        dirs[:] = sorted(d for d in dirs if d not in NOT_SOURCES)
        for name in sorted(files):
            if not name.endswith(NOT_SOURCE_SUFFIXES):
                yield Path(folder) / name


def sources_key(root: Path) -> str:
    """The content of what the wheel is built from, names and bytes."""
    digest = hashlib.sha256()
    for path in source_files(root):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def step(state: Mapping[str, Any] | None, dependencies: str, sources: str, *, usable: bool) -> Step:
    """What the environment needs, from what it was last made or installed from."""
    if state is None or not usable or state.get("dependencies") != dependencies:
        return Step.CREATE
    if state.get("sources") != sources:
        return Step.REINSTALL
    return Step.REUSE


def venv_of(root: Path, home: Path = HOME) -> Path:
    """One environment for each checkout: two worktrees' runs never install over each
    other's."""
    tag = hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:10]
    return home / f"{root.resolve().name}-{tag}"


def _run(argv: Sequence[str]) -> None:
    done = subprocess.run(
        list(argv), capture_output=True, text=True, timeout=INSTALL_TIMEOUT, check=False
    )
    if done.returncode != 0:
        raise DeployedError(f"{' '.join(argv[:4])} failed:\n{done.stderr[-3000:]}")


@contextmanager
def _locked(venv: Path) -> Iterator[None]:
    venv.parent.mkdir(parents=True, exist_ok=True)
    with open(venv.with_name(venv.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _read_state(venv: Path) -> dict[str, Any] | None:
    try:
        state = json.loads((venv / STATE).read_text())
    except (OSError, ValueError):
        return None
    return state if isinstance(state, dict) else None


def _write_state(venv: Path, dependencies: str, sources: str | None) -> None:
    state = {"dependencies": dependencies, "sources": sources}
    (venv / STATE).write_text(json.dumps(state) + "\n")


def ensure(
    root: Path = ROOT,
    home: Path = HOME,
    *,
    python: str = sys.executable,
    run: Runner = _run,
) -> tuple[Install, Step]:
    """The deployed install of `root`, made or brought up to date first."""
    venv = venv_of(root, home)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet"]
    with _locked(venv):
        dependencies, sources = dependencies_key(root), sources_key(root)
        state = _read_state(venv)
        usable = (venv / "bin" / "python").exists()
        needed = step(state, dependencies, sources, usable=usable)
        if needed is Step.CREATE:
            shutil.rmtree(venv, ignore_errors=True)
            run([python, "-m", "venv", str(venv)])
            run([*pip, str(root)])
        elif needed is Step.REINSTALL:
            # Its sources unknown until the install is done: one that fails halfway is
            # done again next time.
            _write_state(venv, dependencies, None)
            run([*pip, "--no-deps", "--force-reinstall", str(root)])
        _write_state(venv, dependencies, sources)
    packages = len(list(venv.glob("lib/python*/site-packages/*.dist-info")))
    description = (
        f"intake installed from {root} (sources {sources[:12]}) with its run dependencies"
        f" alone, {packages} packages in all, in {venv}"
    )
    return Install(str(venv / "bin" / "intake"), description, deployed=True), needed


def development(intake: str) -> Install:
    """The install `make install` makes, whose `intake` runs beside the bench."""
    return Install(intake, f"the development install ({intake})", deployed=False)


@functools.cache
def installed() -> Install:
    """This checkout's deployed install, brought up to date once a run, and said."""
    log("intake under test: bringing its deployed install up to date")
    install, done = ensure()
    log(f"intake under test: {install.description}; the environment {done.value}")
    return install
