"""The shared statements rendered for psycopg: placeholders only, nothing else moves."""

from __future__ import annotations

import re

import pytest

from intake.adapters import sql_statements
from intake.adapters.sql_statements import for_psycopg

LITERALS_AND_COMMENTS = re.compile(r"'(?:[^']|'')*'|--[^\n]*")
NAMED = re.compile(r"(?<!:):[A-Za-z_]")
RENDERED_NAMED = re.compile(r"%\((\w+)\)s")


def test_placeholders_are_rendered_in_psycopg_styles() -> None:
    statement = "UPDATE t SET a = :a, b = :b_2 WHERE id = ? AND n > ?"
    assert for_psycopg(statement) == (
        "UPDATE t SET a = %(a)s, b = %(b_2)s WHERE id = %s AND n > %s"
    )


def test_literals_comments_and_casts_are_left_as_written() -> None:
    statement = "SELECT ':a?', x::text FROM t -- why? :b\nWHERE s = 'it''s :c' AND y = :y"
    assert for_psycopg(statement) == (
        "SELECT ':a?', x::text FROM t -- why? :b\nWHERE s = 'it''s :c' AND y = %(y)s"
    )


def test_a_percent_sign_is_refused() -> None:
    with pytest.raises(ValueError, match="percent"):
        for_psycopg("SELECT 5 % 2")


@pytest.mark.parametrize(
    "name", [name for name in vars(sql_statements) if name.isupper() and not name.startswith("_")]
)
def test_every_shared_statement_renders(name: str) -> None:
    statement = getattr(sql_statements, name)
    rendered = for_psycopg(statement)

    # No placeholder is left in the code (a literal may hold `?` or `:` as it likes)...
    code = LITERALS_AND_COMMENTS.sub("''", rendered)
    assert "?" not in code, rendered
    assert NAMED.search(code) is None, rendered
    # ...each `:name` of the code is one (a cast's `::` none)...
    named = NAMED.findall(LITERALS_AND_COMMENTS.sub("''", statement))
    assert rendered.count("%(") == len(named), rendered
    # ...and nothing but the placeholders moved.
    assert RENDERED_NAMED.sub(r":\1", rendered).replace("%s", "?") == statement
