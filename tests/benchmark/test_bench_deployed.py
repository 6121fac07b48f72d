"""The deployed install the bench measures (bench/deployed.py): when its environment is
made again, when only intake is installed again, and what its processes run with."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from bench.deployed import (
    Step,
    dependencies_key,
    development,
    ensure,
    sources_key,
    step,
    venv_of,
)

PYPROJECT = """\
[project]
name = "intake"
requires-python = ">=3.11"
dependencies = ["starlette>=1.0", "attrs>=24.2"]

[project.optional-dependencies]
dev = ["pytest>=8.3"]
"""


def checkout(root: Path) -> Path:
    (root / "src" / "intake").mkdir(parents=True)
    (root / "pyproject.toml").write_text(PYPROJECT)
    (root / "hatch_build.py").write_text("# the build hook\n")
    (root / "src" / "intake" / "__init__.py").write_text("")
    (root / "src" / "intake" / "cli.py").write_text("def main() -> None: ...\n")
    return root


class Recorder:
    """Runs nothing but what `python -m venv` would leave for the next call to find."""

    def __init__(self) -> None:
        self.commands: list[list[str]] = []

    def __call__(self, argv: Sequence[str]) -> None:
        self.commands.append(list(argv))
        if argv[1:3] == ["-m", "venv"]:
            python = Path(argv[3]) / "bin" / "python"
            python.parent.mkdir(parents=True)
            python.write_text("")

    def kinds(self) -> list[str]:
        def kind(argv: list[str]) -> str:
            if argv[1:3] == ["-m", "venv"]:
                return "venv"
            return "intake alone" if "--no-deps" in argv else "intake and dependencies"

        kinds = [kind(argv) for argv in self.commands]
        self.commands.clear()
        return kinds


def test_what_the_environment_needs_follows_what_it_was_made_from() -> None:
    made = {"dependencies": "d1", "sources": "s1"}
    assert step(None, "d1", "s1", usable=True) is Step.CREATE
    assert step(made, "d1", "s1", usable=False) is Step.CREATE
    assert step(made, "d2", "s1", usable=True) is Step.CREATE
    assert step(made, "d2", "s2", usable=True) is Step.CREATE
    assert step(made, "d1", "s2", usable=True) is Step.REINSTALL
    assert step(made, "d1", "s1", usable=True) is Step.REUSE


def test_the_sources_key_follows_what_the_wheel_is_built_from(tmp_path: Path) -> None:
    root = checkout(tmp_path)
    before = sources_key(root)
    native = root / "src" / "intake" / "native"
    native.mkdir()
    (native / "words.cpython-311-x86_64-linux-gnu.so").write_bytes(b"\x7fELF")
    (root / "src" / "intake" / "__pycache__").mkdir()
    (root / "src" / "intake" / "__pycache__" / "cli.cpython-311.pyc").write_bytes(b"pyc")
    assert sources_key(root) == before, "what a build or a run leaves is no source"
    (native / "words.c").write_text("int x;\n")
    with_c = sources_key(root)
    assert with_c != before
    (root / "src" / "intake" / "cli.py").write_text("def main() -> int: return 0\n")
    assert sources_key(root) != with_c
    (root / "hatch_build.py").write_text("# another build hook\n")
    assert sources_key(root) not in {before, with_c}


def test_the_dependencies_key_follows_the_run_dependencies_and_the_interpreter(
    tmp_path: Path,
) -> None:
    root = checkout(tmp_path)
    before = dependencies_key(root, "3.11.7")
    assert dependencies_key(root, "3.12.1") != before
    extras = PYPROJECT.replace('"pytest>=8.3"', '"pytest>=8.3", "mypy>=1.13"')
    (root / "pyproject.toml").write_text(extras)
    assert dependencies_key(root, "3.11.7") == before, "the dev extras are not installed"
    (root / "pyproject.toml").write_text(PYPROJECT.replace("attrs>=24.2", "attrs>=25.1"))
    assert dependencies_key(root, "3.11.7") != before


def test_the_environment_is_made_once_and_intake_alone_installed_when_it_changes(
    tmp_path: Path,
) -> None:
    root, home = checkout(tmp_path / "checkout"), tmp_path / "home"
    run = Recorder()
    install, done = ensure(root, home, python="python3", run=run)
    assert done is Step.CREATE
    assert run.kinds() == ["venv", "intake and dependencies"]
    assert install.intake == str(venv_of(root, home) / "bin" / "intake")
    assert str(root) in install.description

    assert ensure(root, home, python="python3", run=run)[1] is Step.REUSE
    assert run.kinds() == []

    (root / "src" / "intake" / "cli.py").write_text("def main() -> int: return 1\n")
    assert ensure(root, home, python="python3", run=run)[1] is Step.REINSTALL
    assert run.kinds() == ["intake alone"]
    assert ensure(root, home, python="python3", run=run)[1] is Step.REUSE

    (root / "pyproject.toml").write_text(PYPROJECT.replace("attrs>=24.2", "attrs>=25.1"))
    assert ensure(root, home, python="python3", run=run)[1] is Step.CREATE
    assert run.kinds() == ["venv", "intake and dependencies"]


def test_an_install_that_failed_is_done_again_next_time(tmp_path: Path) -> None:
    root, home = checkout(tmp_path / "checkout"), tmp_path / "home"
    ensure(root, home, python="python3", run=Recorder())
    (root / "src" / "intake" / "cli.py").write_text("def main() -> int: return 1\n")

    def failing(argv: Sequence[str]) -> None:
        raise RuntimeError("pip failed")

    with pytest.raises(RuntimeError):
        ensure(root, home, python="python3", run=failing)
    run = Recorder()
    assert ensure(root, home, python="python3", run=run)[1] is Step.REINSTALL
    assert run.kinds() == ["intake alone"]


def test_two_checkouts_have_an_environment_each(tmp_path: Path) -> None:
    home = tmp_path / "home"
    one, other = checkout(tmp_path / "one" / "intake"), checkout(tmp_path / "other" / "intake")
    assert venv_of(one, home) != venv_of(other, home)
    assert venv_of(one, home).parent == home


def test_a_deployed_intake_runs_from_its_installs_bytecode(tmp_path: Path) -> None:
    root = checkout(tmp_path / "checkout")
    install, _ = ensure(root, tmp_path / "home", python="python3", run=Recorder())
    env = {
        "PYTHONPYCACHEPREFIX": "/elsewhere",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONPATH": "/the/compared/tree/src",
        "INTAKE_DATABASE_URL": "sqlite:///x.db",
    }
    assert install.env(env) == {
        "PYTHONPATH": "/the/compared/tree/src",
        "INTAKE_DATABASE_URL": "sqlite:///x.db",
    }
    assert development("/venv/bin/intake").env(env) == env
