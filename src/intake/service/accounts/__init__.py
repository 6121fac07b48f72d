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
from intake.service.accounts.invitations import Invitations, LinkedInvitation, Offer, Sent
from intake.service.accounts.notes import Notes
from intake.service.accounts.people import KEEPS_AN_OWNER, Member, Users
from intake.service.accounts.service import Accounts
from intake.service.accounts.sign_in import Sessions

__all__ = [
    "KEEPS_AN_OWNER",
    "AccountExists",
    "AccountSettings",
    "Accounts",
    "Invitations",
    "LinkRefused",
    "LinkedInvitation",
    "Member",
    "NewUser",
    "NotAllowed",
    "Notes",
    "Offer",
    "Sent",
    "Sessions",
    "SignInLimits",
    "SignInRefused",
    "SignInThrottled",
    "SignedIn",
    "TooManyInvitations",
    "Users",
]
