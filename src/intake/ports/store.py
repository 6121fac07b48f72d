from __future__ import annotations

from typing import Protocol

from intake.ports.activity import ActivityRepository
from intake.ports.api_keys import ApiKeyRepository
from intake.ports.deliveries import DeliveryRepository
from intake.ports.destinations import DestinationRepository
from intake.ports.forms import FormRepository
from intake.ports.new_events import NewEvents
from intake.ports.notes import NoteRepository
from intake.ports.sealed_values import SealedValueRepository
from intake.ports.secrets import SecretRepository
from intake.ports.spam_statistics import SpamStatisticsRepository
from intake.ports.submissions import SubmissionRepository
from intake.ports.users import UserRepository
from intake.ports.workspaces import WorkspaceRepository


class Store(Protocol):
    """One storage backend: every repository over the same database."""

    @property
    def workspaces(self) -> WorkspaceRepository: ...

    @property
    def forms(self) -> FormRepository: ...

    @property
    def api_keys(self) -> ApiKeyRepository: ...

    @property
    def submissions(self) -> SubmissionRepository: ...

    @property
    def destinations(self) -> DestinationRepository: ...

    @property
    def deliveries(self) -> DeliveryRepository: ...

    @property
    def secrets(self) -> SecretRepository: ...

    @property
    def sealed(self) -> SealedValueRepository:
        """The secrets kept sealed, for sealing them again (`intake secrets rotate`)."""
        ...

    @property
    def users(self) -> UserRepository:
        """Workspace users, their sign-in links and dashboard sessions."""
        ...

    @property
    def notes(self) -> NoteRepository:
        """What a dashboard session is shown once, between a post and its page."""
        ...

    @property
    def activity(self) -> ActivityRepository:
        """Each form's counts day by day, for the dashboard's charts."""
        ...

    @property
    def spam(self) -> SpamStatisticsRepository:
        """The learning filter's statistics, per workspace and instance-wide."""
        ...

    @property
    def new_events(self) -> NewEvents:
        """What a relay waits on between rounds: woken by commits."""
        ...

    async def migrate(self) -> list[str]:
        """Applies pending migrations; returns the names applied (none when current)."""
        ...

    async def ping(self) -> None:
        """Raises StorageUnavailable when the store cannot serve."""
        ...

    async def close(self) -> None: ...
