"""Who a client is: the network its address stands for (decisions.md "Who a client is").

The per-client rate limits and the public route's idempotency keys count a client by this
network, not by its exact address: an IPv6 host is routinely given a whole /64 (and
picks a new temporary address in it every day), so counting addresses would give one
client as many buckets as it has addresses. An IPv4 address written in IPv6 is the IPv4
client itself.
"""

from __future__ import annotations

import ipaddress
from functools import lru_cache
from typing import NewType

DEFAULT_IPV6_PREFIX = 64

ClientNetwork = NewType("ClientNetwork", str)
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

# Forms of one IPv4 address in IPv6: mapped (::ffff:a.b.c.d, what a dual-stack socket
# reports for an IPv4 peer) and translated (::ffff:0:a.b.c.d, RFC 6145). The same host.
_SPELLINGS = (ipaddress.IPv6Network("::ffff:0:0/96"), ipaddress.IPv6Network("::ffff:0:0:0/96"))
# The NAT64 well-known prefix (RFC 6052): how an IPv6-only service sees an IPv4 client.
# 6to4 and Teredo, the other IPv6 addresses an IPv4 host is behind, Python decodes.
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")


# A request reads its client's address three times (who it is, its network, what is
# kept of it) and its proxy's on every request: parsing is most of what each read costs.
@lru_cache(maxsize=4096)
def plain_address(text: str) -> IPAddress | None:
    """The address `text` spells, IPv4 when it is IPv4 spelled in IPv6; None when `text`
    is not one address."""
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address):
        bare = ipaddress.IPv6Address(int(address))  # without a zone index (`%eth0`)
        if any(bare in spelling for spelling in _SPELLINGS):
            return ipaddress.IPv4Address(int(bare) & 0xFFFF_FFFF)
        return bare
    return address


def _embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFF_FFFF)
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]  # (server, client): the client's public IPv4 address
    return None


def client_network(address: str, ipv6_prefix: int = DEFAULT_IPV6_PREFIX) -> ClientNetwork:
    """The key a client is counted by: an IPv4 address whole (also when written in or
    carried by IPv6), an IPv6 address by its network of `ipv6_prefix` bits. Text that is
    no address ("unknown") is its own key, as before."""
    plain = plain_address(address)
    if plain is None:
        return ClientNetwork(address)
    if isinstance(plain, ipaddress.IPv6Address):
        embedded = _embedded_ipv4(plain)
        if embedded is None:
            network = ipaddress.IPv6Network((plain, ipv6_prefix), strict=False)
            return ClientNetwork(str(network))
        plain = embedded
    return ClientNetwork(str(plain))
