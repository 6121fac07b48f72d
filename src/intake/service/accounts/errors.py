"""How a dashboard sign-in can fail. Field errors and unknown objects are the management
errors (AdminError, NotFoundError), as the other owner-side services raise them."""

from __future__ import annotations


class SignInRefused(Exception):  # noqa: N818 - a refusal, answered as one
    """Wrong password, unknown address, or no password set yet: one answer for all, so
    that sign-in tells no one which addresses have accounts."""


class SignInThrottled(Exception):  # noqa: N818 - a refusal, answered as one
    """Too many attempts from this client or for this address: try after `retry_after`."""

    def __init__(self, retry_after: int) -> None:
        super().__init__(f"retry after {retry_after} s")
        self.retry_after = retry_after


class TooManyInvitations(Exception):  # noqa: N818 - a refusal, answered as one
    """The workspace sent its hour's invitations (resends count): try after `retry_after`."""

    def __init__(self, retry_after: int) -> None:
        super().__init__(f"retry after {retry_after} s")
        self.retry_after = retry_after


class LinkRefused(Exception):  # noqa: N818 - a refusal, answered as one
    """A sign-in link that is unknown, used already or older than 24 hours."""


class NotAllowed(Exception):  # noqa: N818 - a refusal, answered as one
    """The signed-in user's role in that workspace does not allow it (members read and
    triage; owners also configure)."""


class AccountExists(Exception):  # noqa: N818 - a refusal, answered as one
    """An invitation's link asked to make a user for an address that has one: its user
    signs in and accepts instead (a link never sets an existing user's password)."""
