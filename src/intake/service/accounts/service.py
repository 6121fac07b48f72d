"""`Accounts`: the dashboard's users, memberships, sign-in and sessions."""

from __future__ import annotations

from intake.service.accounts.people import PeopleAccounts
from intake.service.accounts.sign_in import SignInAccounts


class Accounts(PeopleAccounts, SignInAccounts):
    """Users and who may do what in which workspace (`people.py`); signing in and the
    sessions that follow (`sign_in.py`). Both share `AccountsBase`'s ports."""
