"""Rate-limit rules (spec part 8, decisions.md "Rate limits"): exact sliding windows."""

from __future__ import annotations

import math
import re

from attrs import field, frozen

from intake.domain.client_network import DEFAULT_IPV6_PREFIX, ClientNetwork


@frozen
class RateRule:
    limit: int
    window_seconds: int

    @classmethod
    def parse(cls, text: str) -> RateRule:
        """`requests/seconds`, as the configuration spells it: `5/30`."""
        match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text)
        if match is None or int(match.group(1)) < 1 or int(match.group(2)) < 1:
            raise ValueError(f"a rate limit is 'requests/seconds', not {text!r}")
        return cls(limit=int(match.group(1)), window_seconds=int(match.group(2)))

    def __str__(self) -> str:
        return f"{self.limit}/{self.window_seconds}"


@frozen
class RateLimits:
    public_burst: RateRule = RateRule(5, 30)
    public_sustained: RateRule = RateRule(30, 600)
    public_form: RateRule = RateRule(600, 600)
    server_burst: RateRule = RateRule(50, 30)
    server_sustained: RateRule = RateRule(600, 600)
    # Per API key, over the whole management API (management-api.md).
    management_burst: RateRule = RateRule(100, 10)
    management_sustained: RateRule = RateRule(3_000, 600)
    # The public route (its limits and its idempotency keys) counts an IPv6 client by
    # its network of this many bits: domain/client_network.py.
    ipv6_prefix: int = field(default=DEFAULT_IPV6_PREFIX, kw_only=True)


@frozen
class Window:
    """One counter to hit: the key names the scope (`who` and `where`) and the rule."""

    key: str
    rule: RateRule


@frozen
class RateDecision:
    allowed: bool
    retry_after: int = 0  # whole seconds until a request would be admitted, when refused


def public_windows(limits: RateLimits, form_id: str, client: ClientNetwork) -> tuple[Window, ...]:
    """Per client network and form, and per form: `client` comes from client_network()
    (with `limits.ipv6_prefix`), so no limiter ever counts a bare address."""
    return (
        Window(f"pub:b:{{{form_id}}}:{client}", limits.public_burst),
        Window(f"pub:s:{{{form_id}}}:{client}", limits.public_sustained),
        Window(f"pub:f:{{{form_id}}}", limits.public_form),
    )


def server_windows(limits: RateLimits, form_id: str, key_id: str) -> tuple[Window, ...]:
    return (
        Window(f"srv:b:{{{form_id}}}:{key_id}", limits.server_burst),
        Window(f"srv:s:{{{form_id}}}:{key_id}", limits.server_sustained),
    )


def management_windows(limits: RateLimits, key_id: str) -> tuple[Window, ...]:
    return (
        Window(f"mgmt:b:{{{key_id}}}", limits.management_burst),
        Window(f"mgmt:s:{{{key_id}}}", limits.management_sustained),
    )


def retry_after(oldest: float, window_seconds: int, now: float) -> int:
    """A full window admits again once its oldest hit leaves it; at least one second, and
    at most the window: with several workers the hits reach Redis in another order than
    their timestamps were taken, so the oldest hit may be stamped a little after `now`,
    yet it was recorded before this answer, so it leaves within one window from here."""
    return min(window_seconds, max(1, math.ceil(oldest + window_seconds - now)))
