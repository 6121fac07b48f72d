"""The reserved control fields: split out of the data, the known ones kept as controls."""

from __future__ import annotations

import pytest

from intake.domain.controls import CHALLENGE_TOKEN_FIELDS, Controls, is_control, split_controls
from intake.domain.model import FieldData, FieldValue


def test_every_underscore_name_is_split_out_of_the_data() -> None:
    data, _ = split_controls(
        {"name": "Ada", "_gotcha": "", "_next": "https://a.example/", "_x": "1", "_": "2"}
    )

    assert data == {"name": "Ada"}


def test_the_known_controls_are_extracted() -> None:
    _, controls = split_controls(
        {
            "_gotcha": "i am a bot",
            "_next": "https://example.com/thanks",
            "_subject": "New enquiry",
            "_replyto": "ada@example.com",
        }
    )

    assert controls == Controls(
        honeypot=True,
        next_url="https://example.com/thanks",
        subject="New enquiry",
        reply_to="ada@example.com",
    )
    assert controls.honeypot_filled


def test_unknown_underscore_names_are_dropped_entirely() -> None:
    data, controls = split_controls({"_utm_source": "newsletter", "_x": "y"})

    assert data == {}
    assert controls == Controls()


def test_without_controls_nothing_is_set() -> None:
    data, controls = split_controls({"message": "hello"})

    assert data == {"message": "hello"}
    assert controls == Controls()
    assert not controls.honeypot_filled


@pytest.mark.parametrize("value", ["", None, []])
def test_an_empty_honeypot_is_not_filled(value: FieldValue) -> None:
    _, controls = split_controls({"_gotcha": value})

    assert not controls.honeypot_filled


@pytest.mark.parametrize("value", [" ", "\t", "0", False])
def test_any_non_empty_honeypot_is_filled_even_blank_text(value: FieldValue) -> None:
    _, controls = split_controls({"_gotcha": value})

    assert controls.honeypot_filled


@pytest.mark.parametrize("name", CHALLENGE_TOKEN_FIELDS)
def test_each_challenge_widget_token_is_split_out_and_used(name: str) -> None:
    data, controls = split_controls({"name": "Ada", name: "token-1"})

    assert data == {"name": "Ada"}
    assert controls.challenge_token == "token-1"


def test_the_three_widget_token_names_are_the_decided_ones() -> None:
    assert set(CHALLENGE_TOKEN_FIELDS) == {
        "cf-turnstile-response",
        "h-captcha-response",
        "g-recaptcha-response",
    }


def test_the_first_non_empty_challenge_token_is_used() -> None:
    data, controls = split_controls(
        {
            "cf-turnstile-response": "",
            "h-captcha-response": "second",
            "g-recaptcha-response": "third",
        }
    )

    assert data == {}
    assert controls.challenge_token == "second"


def test_no_challenge_token_is_none() -> None:
    _, controls = split_controls({"cf-turnstile-response": ""})

    assert controls.challenge_token is None


def test_a_repeated_control_field_uses_its_first_value() -> None:
    _, controls = split_controls(
        {
            "_subject": ["first", "second"],
            "_next": ["https://a.example/", "https://b.example/"],
            "cf-turnstile-response": ["tok-a", "tok-b"],
        }
    )

    assert controls.subject == "first"
    assert controls.next_url == "https://a.example/"
    assert controls.challenge_token == "tok-a"


@pytest.mark.parametrize(
    ("value", "subject"),
    [(42, "42"), (1.5, "1.5"), (True, "true"), (None, None), ({"a": 1}, '{"a": 1}'), ([], None)],
)
def test_a_non_string_json_control_value_becomes_text(
    value: FieldValue, subject: str | None
) -> None:
    _, controls = split_controls({"_subject": value})

    assert controls.subject == subject


def test_a_filled_non_string_honeypot_counts_as_filled() -> None:
    _, controls = split_controls({"_gotcha": 1})

    assert controls.honeypot_filled


@pytest.mark.parametrize("name", ["_next", "_subject", "_replyto"])
def test_a_blank_control_is_absent(name: str) -> None:
    _, controls = split_controls({name: "   "})

    assert controls == Controls()


def test_surrounding_spaces_are_trimmed_from_the_reply_address_and_next_url() -> None:
    _, controls = split_controls(
        {"_replyto": " ada@example.com ", "_next": "\thttps://a.example/ok\n"}
    )

    assert controls.reply_to == "ada@example.com"
    assert controls.next_url == "https://a.example/ok"


def test_the_data_keeps_every_other_field_with_its_value_untouched() -> None:
    fields: FieldData = {
        "email": "ada@example.com",
        "tags": ["a", "b"],
        "address": {"city": "London"},
        "count": 3,
        "name_with_underscore_": "kept",
        "mid_dle": "kept",
        "_subject": "Hi",
    }

    data, _ = split_controls(fields)

    assert data == {key: value for key, value in fields.items() if key != "_subject"}


@pytest.mark.parametrize(
    ("name", "control"),
    [
        ("_gotcha", True),
        ("_anything", True),
        ("g-recaptcha-response", True),
        ("email", False),
        ("a_b", False),
        ("recaptcha", False),
    ],
)
def test_is_control_knows_a_control_name(name: str, control: bool) -> None:
    assert is_control(name) is control
