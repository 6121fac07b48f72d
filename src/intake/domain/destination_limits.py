"""How many destinations a form may have, and how often an owner may send one a test.

Each destination multiplies what one submission sends: a form with 150 recipients would
turn one visitor's post into 150 mails to third parties. So each kind is bounded per
form (the operator sets the bounds), and a test, which an owner can send at will, is
throttled per destination."""

from __future__ import annotations

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
