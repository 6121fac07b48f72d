"""Rate limits: the rules, the windows of each route, and the in-process sliding window."""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from intake.adapters import ratelimit_memory
from intake.adapters.ratelimit_memory import InProcessRateLimiter
from intake.config import ConfigError, Settings
from intake.domain.client_network import client_network
from intake.domain.ratelimit import (
    RateDecision,
    RateLimits,
    RateRule,
    Window,
    public_windows,
    retry_after,
    server_windows,
)
from intake.ports.rate_limiter import RateLimiter

T0 = 1_000_000.0
BURST = Window("burst", RateRule(5, 30))


# --- rules and windows ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "rule"),
    [("5/30", RateRule(5, 30)), (" 600 / 600 ", RateRule(600, 600)), ("1/1", RateRule(1, 1))],
)
def test_a_rule_is_read_as_requests_per_seconds(text: str, rule: RateRule) -> None:
    assert RateRule.parse(text) == rule
    assert str(rule) == f"{rule.limit}/{rule.window_seconds}"


@pytest.mark.parametrize("text", ["", "5", "5/", "/30", "0/30", "5/0", "-5/30", "5/30s", "a/b"])
def test_anything_else_is_not_a_rule(text: str) -> None:
    with pytest.raises(ValueError, match="requests/seconds"):
        RateRule.parse(text)


def test_the_default_limits_are_those_of_the_spec_and_the_decisions() -> None:
    limits = RateLimits()

    assert limits.public_burst == RateRule(5, 30)
    assert limits.public_sustained == RateRule(30, 600)
    assert limits.public_form == RateRule(600, 600)
    assert limits.server_burst == RateRule(50, 30)
    assert limits.server_sustained == RateRule(600, 600)
    assert limits.ipv6_prefix == 64


@pytest.mark.parametrize(("raw", "prefix"), [(None, 64), ("48", 48), ("128", 128), ("1", 1)])
def test_the_ipv6_prefix_is_configured_by_its_variable(raw: str | None, prefix: int) -> None:
    env = {} if raw is None else {"INTAKE_RATE_LIMIT_IPV6_PREFIX": raw}

    assert Settings.from_env(env).rate_limits.ipv6_prefix == prefix


@pytest.mark.parametrize("raw", ["0", "129", "-1", "64.5", "/64"])
def test_an_ipv6_prefix_outside_1_to_128_is_refused(raw: str) -> None:
    with pytest.raises(ConfigError, match="INTAKE_RATE_LIMIT_IPV6_PREFIX"):
        Settings.from_env({"INTAKE_RATE_LIMIT_IPV6_PREFIX": raw})


def test_the_public_windows_are_per_ip_and_form_and_per_form() -> None:
    limits = RateLimits()

    windows = public_windows(limits, "frm_1", client_network("203.0.113.9"))

    assert [w.rule for w in windows] == [
        limits.public_burst,
        limits.public_sustained,
        limits.public_form,
    ]
    assert "203.0.113.9" in windows[0].key
    assert "203.0.113.9" in windows[1].key
    assert "203.0.113.9" not in windows[2].key
    assert all("frm_1" in w.key for w in windows)
    assert len({w.key for w in windows}) == 3


def test_windows_of_different_clients_forms_and_routes_do_not_share_keys() -> None:
    limits = RateLimits()
    keys = [
        *(w.key for w in public_windows(limits, "frm_1", client_network("198.51.100.1"))),
        *(w.key for w in public_windows(limits, "frm_1", client_network("198.51.100.2"))),
        *(w.key for w in public_windows(limits, "frm_2", client_network("198.51.100.1"))),
        *(w.key for w in public_windows(limits, "frm_1", client_network("2001:db8::1"))),
        *(w.key for w in server_windows(limits, "frm_1", "key_1")),
        *(w.key for w in server_windows(limits, "frm_1", "key_2")),
    ]

    # The per-form ceiling of one form is shared by its (three) clients; nothing else is.
    assert len(set(keys)) == len(keys) - 2


def test_the_addresses_of_one_client_network_hit_one_window() -> None:
    limiter = InProcessRateLimiter()
    addresses = ["2001:db8:1:2::1", "2001:db8:1:2::2", "::ffff:198.51.100.7", "198.51.100.7"]

    def admitted(address: str) -> bool:
        windows = public_windows(RateLimits(), "frm_1", client_network(address))
        return limiter.hit_now(windows[:1], T0).allowed

    # Each network (a /64; an IPv4 address in both spellings) takes five hits, not ten.
    assert [admitted(a) for a in addresses * 2] == [True] * 8
    assert [admitted(a) for a in addresses] == [True, False, True, False]


def test_the_server_windows_are_per_key_and_form_without_the_public_ceiling() -> None:
    limits = RateLimits()

    windows = server_windows(limits, "frm_1", "key_1")

    assert [w.rule for w in windows] == [limits.server_burst, limits.server_sustained]


@pytest.mark.parametrize(
    ("oldest", "now", "expected"),
    [(100.0, 100.0, 30), (100.0, 129.5, 1), (100.0, 129.99, 1), (100.0, 110.2, 20)],
)
def test_retry_after_is_the_whole_seconds_until_the_oldest_hit_leaves(
    oldest: float, now: float, expected: int
) -> None:
    assert retry_after(oldest, 30, now) == expected


def test_retry_after_is_at_least_one_second() -> None:
    assert retry_after(100.0, 30, 130.0) == 1


# --- the in-process limiter --------------------------------------------------------------


def hits(limiter: InProcessRateLimiter, windows: list[Window], times: list[float]) -> list[bool]:
    return [limiter.hit_now(windows, t).allowed for t in times]


def test_five_hits_in_thirty_seconds_are_admitted_and_the_sixth_refused() -> None:
    limiter = InProcessRateLimiter()

    assert hits(limiter, [BURST], [T0 + i for i in range(5)]) == [True] * 5
    assert limiter.hit_now([BURST], T0 + 5) == RateDecision(allowed=False, retry_after=25)


def test_a_hit_leaves_the_window_exactly_its_length_later() -> None:
    limiter = InProcessRateLimiter()
    hits(limiter, [BURST], [T0] * 5)

    # The window at `now` is (now - 30, now]: just before t + 30 the first hit is still in it.
    assert not limiter.hit_now([BURST], T0 + 29.999).allowed
    assert hits(limiter, [BURST], [T0 + 30] * 6) == [True] * 5 + [False]


def test_the_window_slides_rather_than_resetting() -> None:
    limiter = InProcessRateLimiter()
    hits(limiter, [BURST], [T0, T0 + 10, T0 + 20, T0 + 21, T0 + 22])

    assert hits(limiter, [BURST], [T0 + 30, T0 + 31, T0 + 39.9, T0 + 40]) == [
        True,
        False,
        False,
        True,
    ]


def test_refused_hits_are_not_counted() -> None:
    limiter = InProcessRateLimiter()
    hits(limiter, [BURST], [T0] * 5)
    assert hits(limiter, [BURST], [T0 + 1 + i for i in range(20)]) == [False] * 20

    # Had the refusals counted, the window would still be full at t + 30.
    assert limiter.hit_now([BURST], T0 + 30).allowed


def test_retry_after_is_truthful() -> None:
    limiter = InProcessRateLimiter()
    hits(limiter, [BURST], [T0, T0 + 1.5, T0 + 2, T0 + 3, T0 + 4])
    now = T0 + 6.25

    refusal = limiter.hit_now([BURST], now)

    assert refusal.retry_after == 24
    assert not limiter.hit_now([BURST], now + refusal.retry_after - 1).allowed
    assert limiter.hit_now([BURST], now + refusal.retry_after).allowed


@given(
    st.lists(st.floats(min_value=0, max_value=120, allow_nan=False), min_size=1, max_size=40),
    st.integers(min_value=1, max_value=6),
    st.integers(min_value=2, max_value=40),
)
def test_retry_after_always_admits_and_one_second_less_never_does(
    gaps: list[float], limit: int, window_seconds: int
) -> None:
    window = Window("w", RateRule(limit, window_seconds))
    limiter = InProcessRateLimiter()
    times: list[float] = []
    now = T0
    for gap in gaps:
        now += gap
        times.append(now)
        decision = limiter.hit_now([window], now)
        if decision.allowed:
            continue
        assert decision.retry_after >= 1
        if decision.retry_after > 1:
            assert (
                not replayed(window, times)
                .hit_now([window], now + decision.retry_after - 1)
                .allowed
            )
        assert replayed(window, times).hit_now([window], now + decision.retry_after).allowed


def replayed(window: Window, times: list[float]) -> InProcessRateLimiter:
    """A limiter in the state the same hits leave behind, to probe without disturbing."""
    limiter = InProcessRateLimiter()
    for at in times:
        limiter.hit_now([window], at)
    return limiter


def test_retry_after_is_the_longest_wait_of_the_full_windows() -> None:
    limiter = InProcessRateLimiter()
    short = Window("short", RateRule(1, 10))
    long = Window("long", RateRule(2, 100))
    limiter.hit_now([short, long], T0)
    limiter.hit_now([short, long], T0 + 20)

    assert limiter.hit_now([short, long], T0 + 21) == RateDecision(False, retry_after=79)


def test_several_windows_are_checked_together_and_a_refusal_counts_in_none() -> None:
    limiter = InProcessRateLimiter()
    tight = Window("tight", RateRule(1, 60))
    loose = Window("loose", RateRule(2, 60))

    assert limiter.hit_now([tight, loose], T0).allowed
    assert not limiter.hit_now([tight, loose], T0 + 1).allowed
    assert not limiter.hit_now([tight, loose], T0 + 2).allowed

    # `loose` holds one hit, not three: it still has room for one more.
    assert limiter.hit_now([loose], T0 + 3).allowed
    assert not limiter.hit_now([loose], T0 + 4).allowed


def test_an_admitted_hit_counts_in_every_window() -> None:
    limiter = InProcessRateLimiter()
    a = Window("a", RateRule(1, 60))
    b = Window("b", RateRule(1, 60))

    assert limiter.hit_now([a, b], T0).allowed
    assert not limiter.hit_now([a], T0 + 1).allowed
    assert not limiter.hit_now([b], T0 + 1).allowed


def test_keys_are_independent() -> None:
    limiter = InProcessRateLimiter()
    one = Window("pub:b:{frm_1}:198.51.100.1", RateRule(1, 30))
    other = Window("pub:b:{frm_1}:198.51.100.2", RateRule(1, 30))

    assert limiter.hit_now([one], T0).allowed
    assert not limiter.hit_now([one], T0).allowed
    assert limiter.hit_now([other], T0).allowed


def test_the_spec_limits_hold_together_for_one_client() -> None:
    limiter = InProcessRateLimiter()
    windows = list(public_windows(RateLimits(), "frm_1", client_network("198.51.100.7")))

    # 5 every 30 s is allowed by the burst limit, until the sustained 30 per 10 min binds.
    admitted = [
        limiter.hit_now(windows, T0 + 31 * i + j).allowed for i in range(7) for j in range(5)
    ]

    assert admitted.count(True) == 30
    assert admitted[-5:] == [False] * 5


def test_idle_keys_are_swept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ratelimit_memory, "_SWEEP_EVERY", 3)
    limiter = InProcessRateLimiter()
    limiter.hit_now([Window("idle", RateRule(5, 30))], T0)
    limiter.hit_now([Window("busy", RateRule(5, 300))], T0)
    assert limiter.keys_held == 2

    limiter.hit_now([Window("busy", RateRule(5, 300))], T0 + 30)

    assert limiter.keys_held == 1


def test_a_key_still_in_its_window_is_not_swept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ratelimit_memory, "_SWEEP_EVERY", 2)
    limiter = InProcessRateLimiter()
    window = Window("k", RateRule(1, 30))
    limiter.hit_now([window], T0)

    assert not limiter.hit_now([window], T0 + 29).allowed
    assert limiter.keys_held == 1


@pytest.mark.anyio
async def test_through_the_port_the_async_hit_decides_like_the_sync_one() -> None:
    limiter: RateLimiter = InProcessRateLimiter()
    window = Window("k", RateRule(1, 30))

    assert (await limiter.hit([window], T0)).allowed
    assert await limiter.hit([window], T0 + 1) == RateDecision(False, retry_after=29)


def test_retry_after_never_exceeds_the_window_when_the_oldest_hit_is_stamped_later() -> None:
    # With several workers a hit stamped a moment after this request's `now` can reach
    # the shared windows first; it still leaves the window within one window.
    assert retry_after(oldest=100.4, window_seconds=30, now=100.0) == 30


class _ReferenceLimiter:
    """Exact sliding windows as the rule reads: every admitted hit kept, counted while it
    is younger than the window."""

    def __init__(self) -> None:
        self._hits: dict[str, list[float]] = {}

    def hit(self, windows: list[Window], now: float) -> RateDecision:
        wait = 0
        for window in windows:
            alive = [
                t for t in self._hits.get(window.key, []) if t > now - window.rule.window_seconds
            ]
            self._hits[window.key] = alive
            if len(alive) >= window.rule.limit:
                wait = max(
                    wait, retry_after(alive[-window.rule.limit], window.rule.window_seconds, now)
                )
        if wait:
            return RateDecision(allowed=False, retry_after=wait)
        for window in windows:
            self._hits[window.key].append(now)
        return RateDecision(allowed=True)


_RULES = {
    "one": RateRule(1, 3),
    "two": RateRule(2, 4),
    "three": RateRule(3, 5),  # over the short log's size below: held in a deque
}


@given(
    hits=st.lists(
        st.tuples(
            st.lists(st.sampled_from(sorted(_RULES)), min_size=1, max_size=3, unique=True),
            st.integers(min_value=0, max_value=4),  # whole seconds: hits meet the edges
        ),
        max_size=200,
    ),
    sweep_every=st.integers(min_value=1, max_value=20),
)
@example(hits=[(["one"], 0), (["one"], 3)], sweep_every=20)  # a bare hit leaving its window
@example(hits=[(["two"], 0)] * 2 + [(["two"], 4)], sweep_every=20)  # a list's
@example(hits=[(["three"], 0)] * 3 + [(["three"], 5)], sweep_every=20)  # a deque's
def test_the_limiter_decides_as_exact_sliding_windows_whatever_it_keeps(
    hits: list[tuple[list[str], int]], sweep_every: int
) -> None:
    # A single hit kept bare, then a list or a deque, and sweeps in between: none of how
    # the hits are held may change a decision.
    limiter, reference = InProcessRateLimiter(), _ReferenceLimiter()
    now = T0
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ratelimit_memory, "_SWEEP_EVERY", sweep_every)
        patch.setattr(ratelimit_memory, "_SHORT_LOG", 2)
        for names, step in hits:
            now += step
            windows = [Window(name, _RULES[name]) for name in names]
            assert limiter.hit_now(windows, now) == reference.hit(windows, now)
