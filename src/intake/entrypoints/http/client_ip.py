"""The client address: the socket peer, or what a configured trusted proxy says."""

from __future__ import annotations

from collections.abc import Sequence

from intake.config import Network
from intake.domain.client_network import IPAddress, plain_address


def _trusted(address: IPAddress | None, proxies: Sequence[Network]) -> bool:
    return address is not None and any(address in network for network in proxies)


def client_ip(peer: str | None, forwarded_for: str | None, proxies: Sequence[Network]) -> str:
    """Walks X-Forwarded-For from the right, past our own proxies, to the first address
    a trusted proxy added. A client can prepend anything, so nothing left of that counts;
    a peer that is not a trusted proxy is the client, whatever its headers say.

    Every address is read as its plain form (an IPv4 peer of a dual-stack socket, or an
    IPv4 hop a proxy wrote as `::ffff:a.b.c.d`, is IPv4), so an IPv4 proxy stays trusted
    and two spellings of one client are one client."""
    if not peer:
        return "unknown"
    address = plain_address(peer)
    if address is None:
        return peer
    if not proxies or not forwarded_for or not _trusted(address, proxies):
        return str(address)
    for entry in reversed(forwarded_for.split(",")):
        hop = plain_address(entry.strip())
        if hop is None:
            break  # a garbled entry: trust nothing further left
        address = hop
        if not _trusted(hop, proxies):
            break
    return str(address)
