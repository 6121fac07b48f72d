"""docs/configuration.md's table is the declared variables, and the settings read them all."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from itertools import takewhile
from pathlib import Path

import pytest

from intake.config import Settings
from intake.config.__main__ import main
from intake.config.table import HEADER, markdown_table
from intake.config.variables import VARIABLES

DOCS = Path(__file__).parents[2] / "docs" / "configuration.md"


def documented_table() -> str:
    """The table as committed: from its header to the first line that is not a row."""
    text = DOCS.read_text(encoding="utf-8")
    start = text.index(HEADER)
    lines = text[start:].splitlines(keepends=True)
    return "".join(takewhile(lambda line: line.startswith("|"), lines))


class RecordingEnvironment(Mapping[str, str]):
    """An empty environment that notes every name asked of it."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def __getitem__(self, name: str) -> str:
        self.asked.append(name)
        raise KeyError(name)

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 0


def test_the_documented_table_is_the_one_made_from_the_declarations() -> None:
    # On a difference, `python -m intake.config --markdown` prints the table to commit.
    assert documented_table() == markdown_table()


def test_the_table_has_a_row_for_every_declared_variable() -> None:
    rows = markdown_table().splitlines()[2:]

    assert [row.split("`")[1] for row in rows] == [variable.name for variable in VARIABLES]
    assert len({variable.name for variable in VARIABLES}) == len(VARIABLES)


def test_the_settings_read_every_declared_intake_variable_and_no_other() -> None:
    env = RecordingEnvironment()

    assert Settings.from_env(env) == Settings()
    declared = {variable.name for variable in VARIABLES if variable.name.startswith("INTAKE_")}
    assert set(env.asked) == declared
    assert len(env.asked) == len(declared)  # each read once


def test_a_default_is_shown_as_the_docs_write_it() -> None:
    cells = {variable.name: variable.default_cell() for variable in VARIABLES}

    assert cells["INTAKE_DATABASE_POOL_TIMEOUT"] == "`2`"
    assert cells["INTAKE_RATE_LIMIT_PUBLIC_BURST"] == "`5/30`"
    assert cells["INTAKE_WEBHOOK_ALLOW_PRIVATE"] == "`false`"
    assert cells["INTAKE_REDIS_URL"] == "unset"
    assert cells["INTAKE_TRUSTED_PROXIES"] == "unset"
    assert cells["INTAKE_DOWNLOAD_TTL"] == "`604800`"


def test_the_module_prints_the_table(capsys: pytest.CaptureFixture[str]) -> None:
    main(["--markdown"])

    assert capsys.readouterr().out == markdown_table()
