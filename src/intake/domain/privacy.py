"""What intake keeps of the people who submit, and for how long (docs/privacy.md): the
client address a submission keeps, a form's retention, and which submissions hold an
address whose erasure is asked for."""

from __future__ import annotations

import enum
import ipaddress
from datetime import datetime, timedelta

from intake.domain.client_network import plain_address
from intake.domain.model import Submission, texts_of
from intake.domain.validation import email_key

# A form keeps its submissions from one day to ten years, or (None) until erased.
MIN_RETENTION_DAYS = 1
MAX_RETENTION_DAYS = 3650
# The networks an address is cut to: what tells a region or a provider, not a household.
IPV4_KEPT_BITS = 24
IPV6_KEPT_BITS = 48
_IPV4_KEPT_MASK = ((1 << IPV4_KEPT_BITS) - 1) << (32 - IPV4_KEPT_BITS)
_IPV6_KEPT_MASK = ((1 << IPV6_KEPT_BITS) - 1) << (128 - IPV6_KEPT_BITS)
# Hours a full client address (ClientIpStorage.FULL) is kept before the retention sweep
# cuts it to its network: long enough to look into abuse of a day.
DEFAULT_CLIENT_IP_FULL_HOURS = 24


class ClientIpStorage(enum.StrEnum):
    """What a stored submission keeps of its client's address. Rate limits count the
    full address either way, in memory or Redis, never in the database."""

    TRUNCATED = "truncated"  # its /24 (IPv4) or /48 (IPv6) network
    FULL = "full"
    NONE = "none"


def stored_client_ip(address: str, storage: ClientIpStorage) -> str | None:
    """The client address as a submission keeps it. Text that is no address (a test
    client's "unknown") is kept as given by TRUNCATED: it tells no one apart."""
    if storage is ClientIpStorage.NONE:
        return None
    if storage is ClientIpStorage.FULL:
        return address
    return client_network_address(address)


def client_network_address(address: str) -> str:
    """The /24 (IPv4) or /48 (IPv6) network of `address`, as TRUNCATED keeps it, also when
    a full address kept by FULL is cut later (INTAKE_CLIENT_IP_FULL_HOURS). A network
    is its own network; text that is no address is kept as given."""
    plain = plain_address(address)
    if plain is None:
        return address
    # The network's first address, by masking: making the network object costs a
    # submission more than the rest of this step.
    if isinstance(plain, ipaddress.IPv4Address):
        if ":" not in address:
            # IPv4 text that ipaddress reads is spelled as it prints it (four decimal
            # parts, no leading zero): its network is its first three parts and a 0.
            return address[: address.rindex(".")] + ".0"
        return str(ipaddress.IPv4Address(int(plain) & _IPV4_KEPT_MASK))
    return str(ipaddress.IPv6Address(int(plain) & _IPV6_KEPT_MASK))


def retention_cutoff(now: datetime, days: int) -> datetime:
    """The newest creation time a form keeping `days` days erases at `now`."""
    return now - timedelta(days=days)


def holds_address(submission: Submission, key: str) -> bool:
    """Whether the submission's reply-to, or any text value of its data at any depth,
    is the address whose `email_key` is `key`."""
    if submission.reply_to is not None and email_key(submission.reply_to) == key:
        return True
    # No address without an @: that spares the validator most values.
    texts = texts_of(submission.data)
    return any(email_key(text) == key for text in texts if "@" in text)
