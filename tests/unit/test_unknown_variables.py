"""Which INTAKE_* variables a process warns of as unknown: none that intake's own tools,
its test suite or the docs' examples read."""

from __future__ import annotations

import re
from pathlib import Path

from intake.config.startup import unknown_variables
from intake.config.variables import VARIABLES

ROOT = Path(__file__).resolve().parents[2]
# How the repository's code and docs read a variable: os.environ[...], .get(...),
# os.getenv(...), and a shell's $NAME or ${NAME}.
_READ = re.compile(
    r"""(?:environ(?:\.get)?\(?\[?|getenv\()["'](INTAKE_[A-Z0-9_]+)["']|\$\{?(INTAKE_[A-Z0-9_]+)"""
)
_SOURCES = ("src", "tests", "bench", "docs")
_FILES = ("README.md", "Makefile")


def _read_anywhere() -> set[str]:
    files = [ROOT / name for name in _FILES]
    for folder in _SOURCES:
        files += [p for p in (ROOT / folder).rglob("*") if p.suffix in (".py", ".md", ".sh")]
    names: set[str] = set()
    for path in files:
        for match in _READ.finditer(path.read_text(errors="replace")):
            names.add(match.group(1) or match.group(2))
    return names


def test_no_variable_read_anywhere_in_the_repository_is_warned_of() -> None:
    read = _read_anywhere()
    assert "INTAKE_TEST_DATABASE_URL" in read  # the scan finds what it is about

    assert unknown_variables(dict.fromkeys(read, "x")) == []


def test_no_setting_is_warned_of() -> None:
    settings = {variable.name: "x" for variable in VARIABLES}

    assert unknown_variables(settings) == []


def test_other_programs_variables_are_left_alone() -> None:
    assert unknown_variables({"PATH": "/bin", "DATABASE_URL": "x", "INTAKEDB": "x"}) == []


def test_a_name_near_a_setting_is_suggested_and_one_near_none_is_not() -> None:
    found = unknown_variables({"INTAKE_REDIS": "x", "INTAKE_LOGLEVEL": "x", "INTAKE_FOO": "x"})

    assert [(u.name, u.suggestion) for u in found] == [
        ("INTAKE_FOO", None),
        ("INTAKE_LOGLEVEL", "INTAKE_LOG_LEVEL"),
        ("INTAKE_REDIS", "INTAKE_REDIS_URL"),
    ]
