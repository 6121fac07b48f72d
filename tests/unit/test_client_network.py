"""Who a client is: its address turned into the network the per-client limits and the
public route's idempotency keys count it by (decisions.md "Who a client is")."""

from __future__ import annotations

import pytest

from intake.domain.client_network import DEFAULT_IPV6_PREFIX, client_network, plain_address


def test_an_ipv4_client_is_its_own_address() -> None:
    assert client_network("198.51.100.7") == "198.51.100.7"
    assert client_network("198.51.100.7") != client_network("198.51.100.8")


@pytest.mark.parametrize(
    "address",
    [
        "2001:db8:1:2::1",
        "2001:db8:1:2:ffff:ffff:ffff:ffff",
        "2001:DB8:1:2:0:0:0:9",  # another spelling of an address in it
        "2001:db8:1:2:a:b:c:d",
    ],
)
def test_every_ipv6_address_of_one_64_is_one_client(address: str) -> None:
    assert DEFAULT_IPV6_PREFIX == 64
    assert client_network(address) == "2001:db8:1:2::/64"


def test_ipv6_addresses_of_different_64s_are_different_clients() -> None:
    assert client_network("2001:db8:1:2::1") != client_network("2001:db8:1:3::1")


def test_the_ipv6_prefix_is_configurable() -> None:
    assert client_network("2001:db8:1:2::1", 48) == client_network("2001:db8:1:ff::1", 48)
    assert client_network("2001:db8:1:2::1", 48) == "2001:db8:1::/48"
    assert client_network("2001:db8::1", 128) != client_network("2001:db8::2", 128)


@pytest.mark.parametrize(
    "address",
    [
        "198.51.100.7",
        "::ffff:198.51.100.7",  # IPv4-mapped: an IPv4 peer of a dual-stack socket
        "::ffff:c633:6407",  # the same, written in hexadecimal
        "::ffff:0:198.51.100.7",  # IPv4-translated (SIIT)
        "64:ff9b::198.51.100.7",  # the NAT64 well-known prefix
        "2002:c633:6407::1",  # 6to4: the site of 198.51.100.7
        "2002:c633:6407:ffff::9",  # another /64 of that site
        "2001:0:4136:e378:8000:63bf:39cc:9bf8",  # Teredo, behind the NAT at 198.51.100.7
    ],
)
def test_an_ipv4_address_embedded_in_ipv6_is_that_ipv4_client(address: str) -> None:
    assert client_network(address) == "198.51.100.7"


def test_a_zone_index_does_not_make_another_client() -> None:
    assert client_network("fe80::1%eth0") == client_network("fe80::2") == "fe80::/64"


@pytest.mark.parametrize("text", ["unknown", "", "not-an-ip", "198.51.100.7:80"])
def test_text_that_is_no_address_is_kept_as_it_is(text: str) -> None:
    assert client_network(text) == text


@pytest.mark.parametrize(
    ("text", "plain"),
    [
        ("198.51.100.7", "198.51.100.7"),
        ("::ffff:198.51.100.7", "198.51.100.7"),
        ("::ffff:0:198.51.100.7", "198.51.100.7"),
        ("2001:DB8::0:1", "2001:db8::1"),
        # Addresses of their own, not spellings of the IPv4 one: plain IPv6.
        ("64:ff9b::c633:6407", "64:ff9b::c633:6407"),
        ("2002:c633:6407::1", "2002:c633:6407::1"),
    ],
)
def test_the_plain_address_is_canonical_and_unwraps_only_ipv4_spelled_in_ipv6(
    text: str, plain: str
) -> None:
    assert str(plain_address(text)) == plain


@pytest.mark.parametrize("text", ["unknown", "", " 198.51.100.7", "198.51.100.7/32"])
def test_text_that_is_no_address_has_no_plain_address(text: str) -> None:
    assert plain_address(text) is None
