"""The errors a management request ends in."""

from __future__ import annotations


class AdminError(Exception):
    """A management request that cannot be carried out; the message says why. `field`
    names the input it is about, when it is about one (the API's `error.fields`)."""

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class NotFoundError(AdminError):
    pass


class WorkspaceSuspended(Exception):  # noqa: N818 - a condition, worded by each entry point
    """An owner's request that would change or send something, in a suspended workspace:
    refused whatever it asks (`Workspaces.acting`)."""


class TooSoon(AdminError):  # noqa: N818 - a condition, as WorkspaceSuspended
    """A test (or confirmation) to a destination that had as many as it may for now;
    `retry_after`: whole seconds until one more may go (the API's `429` and
    Retry-After)."""

    def __init__(self, message: str, *, field: str, retry_after: int) -> None:
        super().__init__(message, field=field)
        self.retry_after = retry_after
