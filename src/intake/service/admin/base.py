"""The base every part of `Admin` builds on: the store, clock, ids and settings it holds."""

from __future__ import annotations

from collections.abc import Mapping

from intake.domain import ids
from intake.domain.chat import DEFAULT_TELEGRAM_API_URL
from intake.domain.destination_limits import DestinationLimits
from intake.domain.mail_templates import RenderTemplate, no_template_renderer
from intake.domain.model import Plan
from intake.domain.quota import DEFAULT_PLANS, PlanTerms
from intake.domain.signing import DownloadSigner
from intake.domain.spam.hashing import TokenHasher
from intake.domain.webhook_targets import Resolver
from intake.ports.blobs import BlobStore
from intake.ports.clock import Clock
from intake.ports.ids import IdSource
from intake.ports.store import Store
from intake.ports.templates import TemplateRenderer
from intake.service.spam_knowledge import SpamKnowledge


class AdminBase:
    def __init__(
        self,
        store: Store,
        clock: Clock,
        id_source: IdSource,
        plans: Mapping[Plan, PlanTerms] = DEFAULT_PLANS,
        *,
        webhook_allow_private: bool = False,
        webhook_resolver: Resolver | None = None,
        blobs: BlobStore | None = None,
        signer: DownloadSigner | None = None,
        telegram_api_url: str = DEFAULT_TELEGRAM_API_URL,
        destination_limits: DestinationLimits = DestinationLimits(),  # noqa: B008 - frozen
        template_renderer: TemplateRenderer | None = None,
        spam_knowledge: SpamKnowledge | None = None,
        spam_reports: bool = False,
    ) -> None:
        self._store = store
        self._clock = clock
        self._ids = id_source
        self._plans = plans
        self._allow_private = webhook_allow_private
        # Without one, a webhook's host name is left for the relay to resolve and check.
        self._resolve = webhook_resolver
        self._blobs = blobs
        self._signer = signer
        self._telegram_api_url = telegram_api_url
        self._destination_limits = destination_limits
        # Whether triage is reported to Akismet (docs/scoring.md, "Akismet").
        self._spam_reports = spam_reports
        self._render_template: RenderTemplate = (
            no_template_renderer if template_renderer is None else template_renderer.render
        )
        # The serving process's, shared with its pipeline; a command makes its own.
        self._spam_knowledge = spam_knowledge

    @property
    def _knowledge(self) -> SpamKnowledge:
        """What this process knows of the spam statistics: the token hasher a lesson is
        made with, and `invalidate` after a triage taught."""
        if self._spam_knowledge is None:
            store = self._store
            self._spam_knowledge = SpamKnowledge(store.spam, store.secrets, self._clock)
        return self._spam_knowledge

    async def _spam_hasher(self) -> TokenHasher:
        return await self._knowledge.hasher()

    def _spam_learned(self, workspace_id: str) -> None:
        """This process's next score of the workspace sees what was taught."""
        self._knowledge.invalidate(workspace_id)

    def _id(self, prefix: str) -> str:
        return ids.prefixed_id(prefix, self._ids.random_bytes(ids.ID_RANDOM_BYTES))
