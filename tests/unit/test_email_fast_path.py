"""The plain addresses `is_email` accepts without the validator: every one of them the
validator accepts too, and on any text `is_email` says what the validator says."""

from __future__ import annotations

import pytest
from email_validator import EmailNotValidError, validate_email
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from intake.domain import validation
from intake.domain.validation import is_email
from tests.conftest import examples


def validator_accepts(text: str) -> bool:
    try:
        validate_email(text.strip(), check_deliverability=False)
    except EmailNotValidError:
        return False
    return True


plain_shaped = st.from_regex(validation._PLAIN_ADDRESS, fullmatch=True)
# Near misses: the shapes above with a character changed, added or taken out.
tweaks = st.sampled_from(["", ".", "-", "--", "@", " ", "..", "xn--", "é", "A", "_", "1", "\x00"])


@st.composite
def near_plain(draw: st.DrawFn) -> str:
    text = draw(plain_shaped)
    at = draw(st.integers(min_value=0, max_value=len(text)))
    cut = draw(st.integers(min_value=0, max_value=2))
    return text[:at] + draw(tweaks) + text[at + cut :]


@settings(max_examples=examples(400))
@given(plain_shaped)
def test_every_address_taken_as_plain_is_one_the_validator_accepts(text: str) -> None:
    # assume(), not if: were few drawn addresses plain, Hypothesis would fail the test
    # for filtering too much rather than pass it on nothing.
    assume(validation._is_plain(text))
    assert validator_accepts(text), text


@settings(max_examples=examples(400))
@given(st.one_of(plain_shaped, near_plain(), st.emails(), st.text(max_size=80)))
@example("ada@example.com")
@example("ada@mail.localhost")
@example("ada@example.test")
@example("ada@host.invalid")
@example("ada@onion.onion")
@example("ada@xn--bcher-kva.example")
@example("ada@ab--cd.example")
@example("ada@example.c0m")
@example("ada@123.example")
@example(f"{'a' * 65}@example.com")
@example(f"ada@{'a' * 63}.{'b' * 63}.{'c' * 63}.{'d' * 61}.com")
@example(" ada@example.com\n")
def test_is_email_says_what_the_validator_says(text: str) -> None:
    assert is_email(text) == validator_accepts(text)


@pytest.mark.parametrize(
    "address",
    ["ada@mail.localhost", "ada@example.test", "ada@x.invalid", "ada@a.local", "ada@b.arpa"],
)
def test_reserved_domains_are_left_to_the_validator_which_refuses_them(address: str) -> None:
    assert not validation._is_plain(address)
    assert not is_email(address)


def test_a_common_address_is_taken_as_plain() -> None:
    assert validation._is_plain("ada.lovelace+forms@mail.example.co.uk")


def _reserved_as_before(domain: str) -> bool:
    """The reserved-name check as it read the validator's list on every address."""
    from email_validator import SPECIAL_USE_DOMAIN_NAMES

    return any(domain == name or domain.endswith("." + name) for name in SPECIAL_USE_DOMAIN_NAMES)


labels = st.sampled_from(
    ["localhost", "test", "invalid", "local", "onion", "arpa", "example", "com", "xtest", "a"]
)


@settings(max_examples=examples(400))
@given(st.lists(labels, min_size=1, max_size=4))
def test_reserved_names_and_their_subdomains_are_told_as_before(domain_labels: list[str]) -> None:
    domain = ".".join(domain_labels)
    assert validation._is_plain(f"ada@{domain}") == (
        validation._PLAIN_ADDRESS.fullmatch(f"ada@{domain}") is not None
        and not _reserved_as_before(domain)
    )
