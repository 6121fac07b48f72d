"""`Accounts`: the dashboard's account services, one per concern, built from one set of
inputs: users and who may do what in which workspace (`users`, people.py); invitations,
accepted by their invitee only (`invitations`); signing in and the sessions that follow
(`sessions`, sign_in.py); what a post shows once on the page it leads to (`notes`)."""

from __future__ import annotations

from intake.ports.clock import Clock
from intake.ports.ids import IdSource
from intake.ports.passwords import PasswordHasher
from intake.ports.rate_limiter import RateLimiter
from intake.ports.senders import Mailer
from intake.ports.store import Store
from intake.service.accounts.base import AccountSettings
from intake.service.accounts.invitations import Invitations
from intake.service.accounts.notes import Notes
from intake.service.accounts.people import Users
from intake.service.accounts.sign_in import Sessions


class Accounts:
    """The account services, each called by name (`accounts.users.create(...)`)."""

    def __init__(
        self,
        store: Store,
        clock: Clock,
        id_source: IdSource,
        *,
        hasher: PasswordHasher,
        rate_limiter: RateLimiter,
        settings: AccountSettings,
        mailer: Mailer | None = None,
    ) -> None:
        self.users = Users(store, clock, id_source, settings)
        self.sessions = Sessions(
            store, clock, id_source, settings, hasher=hasher, rate_limiter=rate_limiter
        )
        self.invitations = Invitations(
            store,
            clock,
            id_source,
            settings,
            hasher=hasher,
            rate_limiter=rate_limiter,
            sessions=self.sessions,
            mailer=mailer,
        )
        self.notes = Notes(store, clock, id_source, settings)
