"""What a stored submission keeps of its client's address, and which submissions hold an
address whose erasure is asked for (domain/privacy.py, domain/validation.py)."""

from __future__ import annotations

import ipaddress
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from intake.domain.client_network import plain_address
from intake.domain.model import Submission, SubmissionStatus
from intake.domain.privacy import (
    ClientIpStorage,
    client_network_address,
    holds_address,
    stored_client_ip,
)
from intake.domain.validation import email_key, email_spellings

TRUNCATED, FULL, NONE = ClientIpStorage.TRUNCATED, ClientIpStorage.FULL, ClientIpStorage.NONE


@given(st.one_of(st.ip_addresses(v=4), st.ip_addresses(v=6)))
def test_the_kept_network_is_the_first_address_of_the_24_or_48(
    address: ipaddress.IPv4Address | ipaddress.IPv6Address,
) -> None:
    kept = client_network_address(str(address))

    plain = plain_address(str(address))  # IPv4 written in IPv6 is IPv4
    assert plain is not None
    bits = 24 if isinstance(plain, ipaddress.IPv4Address) else 48
    assert kept == str(ipaddress.ip_network((plain, bits), strict=False).network_address)


@pytest.mark.parametrize(
    ("address", "kept"),
    [
        ("203.0.113.77", "203.0.113.0"),
        ("::ffff:203.0.113.77", "203.0.113.0"),  # IPv4 spelled in IPv6: its /24
        ("2001:db8:abcd:12:3456::1", "2001:db8:abcd::"),
        ("fe80::1%eth0", "fe80::"),
        ("unknown", "unknown"),  # no address: nothing to tell apart
    ],
)
def test_an_address_is_kept_as_its_network_by_default(address: str, kept: str) -> None:
    assert stored_client_ip(address, TRUNCATED) == kept


@pytest.mark.parametrize(
    "address", ["203.0.113.77", "::ffff:203.0.113.77", "2001:db8:abcd:12::1", "unknown"]
)
def test_a_network_is_its_own_network(address: str) -> None:
    # What lets the sweep cut a full address later, and leave one cut already alone.
    network = client_network_address(address)
    assert client_network_address(network) == network == stored_client_ip(address, TRUNCATED)


def test_full_keeps_the_address_and_none_keeps_nothing() -> None:
    assert stored_client_ip("203.0.113.77", FULL) == "203.0.113.77"
    assert stored_client_ip("203.0.113.77", NONE) is None


@pytest.mark.parametrize(
    ("given", "key"),
    [
        ("ada@example.com", "ada@example.com"),
        ("  Ada@EXAMPLE.com ", "ada@example.com"),
        ("ADA@xn--bcher-kva.example", "ada@bücher.example"),
        ("not an address", None),
        ("", None),
    ],
)
def test_an_address_is_compared_as_the_validator_normalises_it(given: str, key: str | None) -> None:
    assert email_key(given) == key


def test_the_spellings_searched_for_hold_the_ascii_and_the_given_forms() -> None:
    assert email_spellings("Ada@Bücher.example") == (
        "ada@bücher.example",
        "ada@xn--bcher-kva.example",
    )
    assert email_spellings("nope") == ()


def _submission(data: dict[str, object], reply_to: str | None = None) -> Submission:
    return Submission(
        submission_id="sub_1",
        form_id="frm_1",
        workspace_id="ws_1",
        status=SubmissionStatus.ACCEPTED,
        data=data,  # type: ignore[arg-type]
        created_at=datetime(2026, 1, 1, tzinfo=UTC),
        reply_to=reply_to,
    )


@pytest.mark.parametrize(
    ("data", "reply_to", "held"),
    [
        ({"email": "ADA@example.com"}, None, True),
        ({"who": {"emails": ["x", " ada@example.com"]}}, None, True),
        ({"note": "hi"}, "Ada@Example.com", True),
        ({"note": "write to ada@example.com please"}, None, False),  # in a sentence: not equal
        ({"email": "ada@example.co"}, None, False),
        ({"email": "bada@example.com"}, None, False),
        ({"n": 3, "ok": True, "none": None}, None, False),
    ],
)
def test_a_submission_holds_an_address_in_a_whole_value_or_its_reply_to(
    data: dict[str, object], reply_to: str | None, held: bool
) -> None:
    assert holds_address(_submission(data, reply_to), "ada@example.com") is held


def _network_as_before(address: str) -> str:
    """client_network_address as it read every IPv4 address: masked, then printed."""
    plain = plain_address(address)
    if plain is None:
        return address
    if isinstance(plain, ipaddress.IPv4Address):
        return str(ipaddress.IPv4Address(int(plain) & 0xFFFFFF00))
    return str(ipaddress.IPv6Address(int(plain) & (((1 << 48) - 1) << 80)))


@given(
    st.one_of(
        st.ip_addresses(v=4).map(str),
        st.ip_addresses().map(str),
        st.ip_addresses(v=4).map(lambda a: f"::ffff:{a}"),
        st.text(alphabet="0123456789.:af ", max_size=20),
        st.lists(st.integers(0, 300).map(str), min_size=3, max_size=5).map(".".join),
        st.lists(st.text("0123456789", max_size=4), min_size=4, max_size=4).map(".".join),
    )
)
def test_what_truncated_keeps_of_any_text_is_what_it_kept_before(address: str) -> None:
    assert client_network_address(address) == _network_as_before(address)
