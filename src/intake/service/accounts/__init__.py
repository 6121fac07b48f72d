"""The dashboard's users, memberships, sign-in and sessions."""

from intake.service.accounts.base import (
    AccountSettings,
    NewUser,
    SignedIn,
    SignInLimits,
)
from intake.service.accounts.errors import (
    LinkRefused,
    NotAllowed,
    SignInRefused,
    SignInThrottled,
)
from intake.service.accounts.people import Member
from intake.service.accounts.service import Accounts

__all__ = [
    "AccountSettings",
    "Accounts",
    "LinkRefused",
    "Member",
    "NewUser",
    "NotAllowed",
    "SignInLimits",
    "SignInRefused",
    "SignInThrottled",
    "SignedIn",
]
