"""How many destinations a form may have, and how often an owner may send one a test.

Each destination multiplies what one submission sends: a form with 150 recipients would
turn one visitor's post into 150 mails to third parties. So each kind is bounded per
form (the operator sets the bounds), and a test, which an owner can send at will, is
throttled per destination."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from attrs import frozen

DEFAULT_MAX_PER_FORM = 10
MAX_PER_FORM = 1000  # what an operator may set: past it a form is an amplifier whatever


@frozen
class DestinationLimits:
    """At most this many of each kind on one form."""

    recipients: int = DEFAULT_MAX_PER_FORM
    webhooks: int = DEFAULT_MAX_PER_FORM
    chats: int = DEFAULT_MAX_PER_FORM


class LimitReached(Exception):  # noqa: N818 - a condition the caller words
    """The form has as many destinations of the kind as it may: nothing was added."""


class SendThrottled(Exception):  # noqa: N818 - a condition the caller words
    """The destination had its tests for now: nothing was queued. `retry_after`: whole
    seconds until one more may go."""

    def __init__(self, retry_after: int) -> None:
        super().__init__(f"retry after {retry_after} s")
        self.retry_after = retry_after


@frozen
class Window:
    count: int
    length: timedelta


# One test a minute and five an hour to each destination: enough to try a setting a few
# times, too few to mail anyone something they did not ask for again and again.
TEST_WINDOWS: tuple[Window, ...] = (
    Window(1, timedelta(minutes=1)),
    Window(5, timedelta(hours=1)),
)
TEST_LOOKBACK = max(window.length for window in TEST_WINDOWS)
# A workspace asks at most ten addresses an hour to confirm (as many as a form may
# have): removing an address that never answered and adding it again asks again, and
# must not become a way to mail someone over and over.
CONSENT_WINDOWS: tuple[Window, ...] = (Window(10, timedelta(hours=1)),)
CONSENT_LOOKBACK = max(window.length for window in CONSENT_WINDOWS)


def wait_for_test(
    sent: Sequence[datetime], now: datetime, windows: Sequence[Window] = TEST_WINDOWS
) -> int | None:
    """Whole seconds (at least 1) until one more may go, given the times of those queued
    within the longest of `windows` (the tests to one destination, by default); None: it
    may go now."""
    wait = 0.0
    for window in windows:
        inside = sorted(at for at in sent if at > now - window.length)
        if len(inside) >= window.count:
            # The oldest of the last `count` leaves the window first.
            frees_at = inside[-window.count] + window.length
            wait = max(wait, (frees_at - now).total_seconds())
    if wait <= 0:
        return None
    return max(1, int(wait) + (0 if wait.is_integer() else 1))
