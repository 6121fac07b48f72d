"""`Accounts`: the dashboard's users, memberships, sign-in and sessions."""

from __future__ import annotations

from intake.service.accounts.invitations import InvitationAccounts
from intake.service.accounts.notes import NoteAccounts
from intake.service.accounts.people import PeopleAccounts


class Accounts(PeopleAccounts, InvitationAccounts, NoteAccounts):
    """Users and who may do what in which workspace (`people.py`); invitations, accepted
    by their invitee only (`invitations.py`); signing in and the sessions that follow
    (`sign_in.py`); what a post shows once on the page it leads to (`notes.py`). All share
    `AccountsBase`'s ports."""
