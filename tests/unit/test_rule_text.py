"""A form's rules as the command line and the dashboard's settings box type them, one a
line: every rule the API can store reads back as itself, field names with colons too."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from intake.domain.model import FieldRule, RuleKind
from intake.entrypoints.http.dashboard.form_settings_input import rule_text
from intake.service.admin import AdminError
from intake.service.admin.inputs import parse_rule

names = st.text(
    st.characters(codec="utf-8", exclude_categories=("Cc", "Cs", "Zl", "Zp")), min_size=1
).filter(lambda name: name.strip() == name and "\n" not in name)


@given(
    field=names,
    kind=st.sampled_from(list(RuleKind)),
    limit=st.integers(1, 10**6),
)
def test_a_rule_typed_as_it_is_shown_reads_back_as_itself(
    field: str, kind: RuleKind, limit: int
) -> None:
    rule = FieldRule(field, kind, limit if kind is RuleKind.MAX_LENGTH else None)

    assert parse_rule(rule_text(rule)) == rule


def test_a_field_name_may_hold_colons() -> None:
    assert parse_rule("utm:source:required") == FieldRule("utm:source", RuleKind.REQUIRED)
    assert parse_rule("a:b:max_length=5") == FieldRule("a:b", RuleKind.MAX_LENGTH, 5)


@pytest.mark.parametrize("text", ["email", ":required", "email:", "a:b:nope", "a:max_length=x"])
def test_a_rule_without_a_field_or_kind_is_refused(text: str) -> None:
    with pytest.raises(AdminError):
        parse_rule(text)
