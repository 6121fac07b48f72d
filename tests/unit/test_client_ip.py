"""The client address: the socket peer, or what a configured trusted proxy says."""

from __future__ import annotations

import ipaddress

import pytest

from intake.config import Network
from intake.entrypoints.http.client_ip import client_ip

PROXIES: tuple[Network, ...] = (
    ipaddress.ip_network("10.0.0.0/8"),
    ipaddress.ip_network("fd00::/8"),
)


@pytest.mark.parametrize("forwarded", [None, "", "198.51.100.7", "1.1.1.1, 2.2.2.2"])
def test_without_trusted_proxies_the_peer_is_the_client(forwarded: str | None) -> None:
    assert client_ip("203.0.113.5", forwarded, ()) == "203.0.113.5"


def test_a_peer_that_is_not_a_trusted_proxy_is_the_client_whatever_it_forwards() -> None:
    assert client_ip("203.0.113.5", "198.51.100.7", PROXIES) == "203.0.113.5"


def test_a_trusted_peer_gives_the_address_its_proxy_added() -> None:
    assert client_ip("10.0.0.2", "198.51.100.7", PROXIES) == "198.51.100.7"


def test_the_rightmost_untrusted_hop_is_the_client_past_a_chain_of_proxies() -> None:
    assert client_ip("10.0.0.2", "198.51.100.7, 10.0.0.9, 10.1.2.3", PROXIES) == "198.51.100.7"


def test_entries_a_client_prepended_are_ignored() -> None:
    spoofed = "127.0.0.1, 10.0.0.5, 192.0.2.1, 198.51.100.7"

    assert client_ip("10.0.0.2", spoofed, PROXIES) == "198.51.100.7"


@pytest.mark.parametrize(
    ("forwarded", "expected"),
    [
        ("garbage", "10.0.0.2"),
        ("198.51.100.7, not-an-ip", "10.0.0.2"),
        ("not-an-ip, 198.51.100.7", "198.51.100.7"),
        ("not-an-ip, 10.0.0.9", "10.0.0.9"),
        ("198.51.100.7,,10.0.0.9", "10.0.0.9"),
        ("   ", "10.0.0.2"),
    ],
)
def test_a_garbled_entry_stops_the_walk_at_the_last_trusted_address(
    forwarded: str, expected: str
) -> None:
    assert client_ip("10.0.0.2", forwarded, PROXIES) == expected


def test_a_forwarded_list_of_only_trusted_proxies_gives_the_leftmost() -> None:
    assert client_ip("10.0.0.2", "10.0.0.8, 10.0.0.9", PROXIES) == "10.0.0.8"


def test_ipv6_hops_and_proxies_are_understood() -> None:
    assert client_ip("fd00::1", "2001:db8::7, fd00::2", PROXIES) == "2001:db8::7"


def test_a_trusted_peer_without_a_forwarded_header_is_the_client() -> None:
    assert client_ip("10.0.0.2", None, PROXIES) == "10.0.0.2"


def test_an_unknown_peer_is_named_as_such() -> None:
    assert client_ip(None, "198.51.100.7", PROXIES) == "unknown"
    assert client_ip(None, None, ()) == "unknown"


def test_an_ipv4_peer_of_a_dual_stack_socket_is_written_as_ipv4() -> None:
    assert client_ip("::ffff:203.0.113.5", None, ()) == "203.0.113.5"


def test_a_trusted_ipv4_proxy_seen_through_a_dual_stack_socket_is_trusted() -> None:
    assert client_ip("::ffff:10.0.0.2", "198.51.100.7", PROXIES) == "198.51.100.7"


def test_a_forwarded_ipv4_mapped_hop_is_read_as_ipv4_and_past_trusted_proxies() -> None:
    forwarded = "::ffff:198.51.100.7, ::ffff:10.0.0.9"

    assert client_ip("10.0.0.2", forwarded, PROXIES) == "198.51.100.7"
