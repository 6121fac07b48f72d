"""Field validation: each rule kind, the default email rule, `_replyto` and file parts."""

from __future__ import annotations

import pytest

from intake.domain.model import FieldData, FieldRule, FieldValue, RuleKind
from intake.domain.validation import (
    FILE_NOT_ACCEPTED,
    MESSAGES,
    is_email,
    is_number,
    is_url,
    reply_address,
    validate,
)

REQUIRED = "This field is required."
EMAIL = "Please enter a valid email address."
URL = "Please enter a valid URL."
NUMBER = "Please enter a number."


def errors_for(rule: FieldRule, value: FieldValue) -> dict[str, str]:
    return validate({rule.field: value}, [rule], reply_to=None)


def test_the_messages_are_the_documented_ones() -> None:
    assert MESSAGES[RuleKind.REQUIRED] == REQUIRED
    assert MESSAGES[RuleKind.EMAIL] == EMAIL
    assert MESSAGES[RuleKind.URL] == URL
    assert MESSAGES[RuleKind.NUMBER] == NUMBER
    assert FILE_NOT_ACCEPTED == "File uploads are not accepted."


# --- required ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value", ["", "   ", "\t\n", [], ["", " "], None, {}, {"a": " "}, {"a": {"b": ""}}]
)
def test_a_required_field_that_is_blank_is_reported(value: FieldValue) -> None:
    assert errors_for(FieldRule("name", RuleKind.REQUIRED), value) == {"name": REQUIRED}


def test_a_required_field_that_is_missing_is_reported() -> None:
    rule = FieldRule("name", RuleKind.REQUIRED)

    assert validate({}, [rule], reply_to=None) == {"name": REQUIRED}


@pytest.mark.parametrize("value", ["Ada", ["", "x"], 0, False, 0.0, {"a": "b"}])
def test_a_required_field_with_any_content_holds(value: FieldValue) -> None:
    assert errors_for(FieldRule("name", RuleKind.REQUIRED), value) == {}


# --- email ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        "ada@example.com",
        "first.last+tag@sub.example.co.uk",
        "J\u00f6rg@b\u00fccher.de",
        " ada@example.com ",  # a phone's keyboard adds the trailing space
        ["a@example.com", "b@example.com"],
        "",
    ],
)
def test_an_email_rule_accepts_addresses_and_leaves_blank_to_required(
    value: FieldValue,
) -> None:
    assert errors_for(FieldRule("contact", RuleKind.EMAIL), value) == {}


@pytest.mark.parametrize(
    "value",
    [
        "plainaddress",
        "ada@",
        "@example.com",
        "ada@example",
        "ada@@example.com",
        "Ada <ada@example.com>",
        "ada@localhost",
        ["a@example.com", "nope"],
        42,
        {"a": "a@example.com"},
    ],
)
def test_an_email_rule_refuses_what_is_not_an_address(value: FieldValue) -> None:
    assert errors_for(FieldRule("contact", RuleKind.EMAIL), value) == {"contact": EMAIL}


# --- url -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        "http://example.com",
        "https://example.com/path?q=1#frag",
        "HTTPS://EXAMPLE.COM",
        "https://[2001:db8::1]:8443/",
        " https://example.com ",
    ],
)
def test_a_url_rule_accepts_http_and_https_addresses(value: str) -> None:
    assert is_url(value)
    assert errors_for(FieldRule("site", RuleKind.URL), value) == {}


@pytest.mark.parametrize(
    "value",
    [
        "ftp://example.com",
        "javascript:alert(1)",
        "mailto:ada@example.com",
        "example.com",
        "//example.com",
        "http://",
        "https:///path",
        "http://exa mple.com",
        "https://example.com:99999/",
        "http://[::1",
    ],
)
def test_a_url_rule_refuses_anything_but_an_http_or_https_address(value: str) -> None:
    assert not is_url(value)
    assert errors_for(FieldRule("site", RuleKind.URL), value) == {"site": URL}


def test_a_url_rule_refuses_a_non_text_value() -> None:
    assert errors_for(FieldRule("site", RuleKind.URL), 5) == {"site": URL}


# --- number --------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["12", "-3", " 1.5 ", "1e3", "0", 7, -2.5, 0, ["1", 2]])
def test_a_number_rule_accepts_numbers_as_text_or_json(value: FieldValue) -> None:
    assert errors_for(FieldRule("age", RuleKind.NUMBER), value) == {}


@pytest.mark.parametrize(
    "value",
    [
        "abc",
        "12abc",
        "nan",
        "NaN",
        "inf",
        "-Infinity",
        "1e400",
        "1_000",
        "0x10",
        True,
        False,
        float("nan"),
        float("inf"),
        {"n": 1},
        ["1", "x"],
    ],
)
def test_a_number_rule_refuses_anything_else(value: FieldValue) -> None:
    assert errors_for(FieldRule("age", RuleKind.NUMBER), value) == {"age": NUMBER}


@pytest.mark.parametrize(
    "value",
    [
        pytest.param(10**400, id="huge int"),
        pytest.param(-(10**400), id="huge negative int"),
        pytest.param(int("9" * 400), id="400 nines"),
        pytest.param("9" * 400, id="400 nines as text"),
        pytest.param("-1e309", id="huge exponent as text"),
    ],
)
def test_a_number_a_double_cannot_hold_is_refused_not_raised(value: FieldValue) -> None:
    # A JSON integer is any size in Python; past a double's range it is no number a
    # form can use, and converting it raised OverflowError.
    assert errors_for(FieldRule("age", RuleKind.NUMBER), value) == {"age": NUMBER}


def test_the_largest_double_is_still_a_number() -> None:
    assert is_number(int(1.7976931348623157e308))
    assert is_number(str(int(1.7976931348623157e308)))


def test_is_number_refuses_booleans_though_they_are_ints() -> None:
    assert not is_number(True)
    assert is_number(1)


# --- max_length ----------------------------------------------------------------------


def test_max_length_counts_characters_not_bytes() -> None:
    rule = FieldRule("bio", RuleKind.MAX_LENGTH, limit=5)

    assert errors_for(rule, "\u20ac" * 5) == {}
    assert errors_for(rule, "\U0001f600" * 5) == {}
    assert errors_for(rule, "abcdef") == {"bio": "Please use at most 5 characters."}


def test_max_length_applies_to_each_value_of_a_repeated_name() -> None:
    rule = FieldRule("tags", RuleKind.MAX_LENGTH, limit=3)

    assert errors_for(rule, ["abc", "de"]) == {}
    assert errors_for(rule, ["abc", "defg"]) == {"tags": "Please use at most 3 characters."}


# --- how the rules combine -----------------------------------------------------------


def test_a_rule_on_an_absent_field_other_than_required_does_not_fire() -> None:
    rules = [FieldRule("site", RuleKind.URL), FieldRule("age", RuleKind.NUMBER)]

    assert validate({}, rules, reply_to=None) == {}


def test_each_invalid_field_gets_one_message_the_first_rule_winning() -> None:
    rules = [
        FieldRule("name", RuleKind.REQUIRED),
        FieldRule("name", RuleKind.MAX_LENGTH, limit=2),
        FieldRule("site", RuleKind.URL),
        FieldRule("age", RuleKind.NUMBER),
    ]
    data: FieldData = {"name": "", "site": "nope", "age": "12"}

    assert validate(data, rules, reply_to=None) == {"name": REQUIRED, "site": URL}


def test_everything_valid_gives_no_errors() -> None:
    rules = [FieldRule("name", RuleKind.REQUIRED), FieldRule("email", RuleKind.REQUIRED)]
    data: FieldData = {"name": "Ada", "email": "ada@example.com"}

    assert validate(data, rules, reply_to="ada@example.com") == {}


def test_a_field_named_email_is_checked_without_any_rule() -> None:
    assert validate({"email": "not-an-address"}, [], reply_to=None) == {"email": EMAIL}
    assert validate({"email": "ada@example.com"}, [], reply_to=None) == {}
    assert validate({"email": ""}, [], reply_to=None) == {}


def test_a_nested_json_object_in_the_email_field_is_checked_not_recursed_forever() -> None:
    assert validate({"email": {"address": "ada@example.com"}}, [], reply_to=None) == {
        "email": EMAIL
    }


def test_an_invalid_replyto_is_reported_under_its_own_name() -> None:
    assert validate({}, [], reply_to="nobody") == {"_replyto": EMAIL}
    assert validate({}, [], reply_to="ada@example.com") == {}


def test_a_file_field_is_refused_whatever_its_rules() -> None:
    rules = [FieldRule("cv", RuleKind.REQUIRED)]

    errors = validate({"cv": ""}, rules, reply_to=None, file_fields=["cv"])

    assert errors == {"cv": "File uploads are not accepted."}


# --- the reply address ---------------------------------------------------------------


def test_reply_address_prefers_replyto() -> None:
    assert reply_address({"email": "b@example.com"}, "a@example.com") == "a@example.com"


def test_reply_address_falls_back_to_the_email_field() -> None:
    assert reply_address({"email": " b@example.com "}, None) == "b@example.com"


@pytest.mark.parametrize("data", [{}, {"email": "  "}, {"email": ["a@x.com", "b@x.com"]}])
def test_reply_address_is_none_without_one_address(data: FieldData) -> None:
    assert reply_address(data, None) is None


def test_is_email_forgives_surrounding_spaces_only() -> None:
    assert is_email(" ada@example.com\n")
    assert not is_email("ada @example.com")
