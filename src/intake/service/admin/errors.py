"""The errors a management request ends in."""

from __future__ import annotations


class AdminError(Exception):
    """A management request that cannot be carried out; the message says why."""


class NotFoundError(AdminError):
    pass
