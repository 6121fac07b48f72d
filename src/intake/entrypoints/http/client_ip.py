"""The client address: the socket peer, or what a configured trusted proxy says."""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence

from intake.config import Network


def _trusted(address: str, proxies: Sequence[Network]) -> bool:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in network for network in proxies)


def client_ip(peer: str | None, forwarded_for: str | None, proxies: Sequence[Network]) -> str:
    """Walks X-Forwarded-For from the right, past our own proxies, to the first address
    a trusted proxy added. A client can prepend anything, so nothing left of that counts;
    a peer that is not a trusted proxy is the client, whatever its headers say."""
    address = peer or "unknown"
    if not proxies or not forwarded_for or not _trusted(address, proxies):
        return address
    for entry in reversed(forwarded_for.split(",")):
        try:
            # Canonical text, so two spellings of one address share their rate limits.
            hop = str(ipaddress.ip_address(entry.strip()))
        except ValueError:
            return address  # a garbled entry: trust nothing further left
        if not _trusted(hop, proxies):
            return hop
        address = hop
    return address
