"""The dashboard's users, memberships, sign-in and sessions."""

from intake.service.accounts.base import (
    AccountSettings,
    NewUser,
    SignedIn,
    SignInLimits,
)
from intake.service.accounts.errors import (
    AccountExists,
    LinkRefused,
    NotAllowed,
    SignInRefused,
    SignInThrottled,
    TooManyInvitations,
)
from intake.service.accounts.invitations import LinkedInvitation, Offer, Sent
from intake.service.accounts.people import KEEPS_AN_OWNER, Member
from intake.service.accounts.service import Accounts

__all__ = [
    "KEEPS_AN_OWNER",
    "AccountExists",
    "AccountSettings",
    "Accounts",
    "LinkRefused",
    "LinkedInvitation",
    "Member",
    "NewUser",
    "NotAllowed",
    "Offer",
    "Sent",
    "SignInLimits",
    "SignInRefused",
    "SignInThrottled",
    "SignedIn",
    "TooManyInvitations",
]
