"""The owner-side services, one per concern, and the one function that builds them all
from the same inputs: what the `intake` command, the management API, the dashboard and
the library call. Each service is a plain class given what it needs; the rules they share
live once, in the parts they are given: `Ownership` (a workspace reaches only its own
objects), `Workspaces.acting` (a suspended workspace changes nothing), `TargetCheck` (a
destination's URL passes the relay's rule), `DestinationTests` (tests to one destination
are throttled) and the destination limits.

Each service is made, and its module imported, when first asked for: a command that
uses one service does not load the others (a management command's start is what
scripts pay each time). Those the services share (the spam knowledge, triage, the
destinations' checks and test throttle) are made once and shared all the same."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property
from typing import TYPE_CHECKING

from intake.domain.chat import DEFAULT_TELEGRAM_API_URL
from intake.domain.destination_limits import DestinationLimits
from intake.domain.model import Plan
from intake.domain.quota import DEFAULT_PLANS, PlanTerms
from intake.domain.signing import DownloadSigner
from intake.domain.webhook_targets import Resolver
from intake.ports.blobs import BlobStore
from intake.ports.clock import Clock
from intake.ports.ids import IdSource
from intake.ports.store import Store
from intake.ports.templates import TemplateRenderer
from intake.service.admin.mint import IdMint
from intake.service.admin.ownership import Ownership

if TYPE_CHECKING:
    from intake.service.admin.activity import ActivityCounts
    from intake.service.admin.chat_destinations import Chats
    from intake.service.admin.deliveries import Deliveries
    from intake.service.admin.erasure import Privacy
    from intake.service.admin.exports import Exports
    from intake.service.admin.forms import Forms
    from intake.service.admin.keys import Keys
    from intake.service.admin.listing import Submissions
    from intake.service.admin.queued_tests import DestinationTests
    from intake.service.admin.recipients import Recipients
    from intake.service.admin.spam_filter import SpamFilter
    from intake.service.admin.targets import TargetCheck
    from intake.service.admin.triage import Triage
    from intake.service.admin.webhooks import Webhooks
    from intake.service.admin.workspaces import Workspaces
    from intake.service.spam_knowledge import SpamKnowledge

# The imports below are the services' own, made when first asked for (the module's
# docstring says why).
# ruff: noqa: PLC0415


class OwnerServices:
    """Every owner-side service, by concern. A composition builds one (`owner_services`)
    and hands each entry point the services it calls."""

    def __init__(
        self,
        store: Store,
        clock: Clock,
        id_source: IdSource,
        plans: Mapping[Plan, PlanTerms],
        *,
        webhook_allow_private: bool,
        webhook_resolver: Resolver | None,
        blobs: BlobStore | None,
        signer: DownloadSigner | None,
        telegram_api_url: str,
        destination_limits: DestinationLimits,
        template_renderer: TemplateRenderer | None,
        spam_knowledge: SpamKnowledge | None,
        spam_reports: bool,
    ) -> None:
        self._store = store
        self._clock = clock
        self._plans = plans
        self._allow_private = webhook_allow_private
        self._resolver = webhook_resolver
        self._blobs = blobs
        self._signer = signer
        self._telegram_api_url = telegram_api_url
        self._limits = destination_limits
        self._renderer = template_renderer
        self._given_knowledge = spam_knowledge
        self._spam_reports = spam_reports
        self._mint = IdMint(clock, id_source)
        self._ownership = Ownership(store)

    @cached_property
    def workspaces(self) -> Workspaces:
        from intake.service.admin.workspaces import Workspaces

        return Workspaces(self._store, self._clock, self._mint, self._plans)

    @cached_property
    def forms(self) -> Forms:
        from intake.service.admin.forms import Forms

        return Forms(
            self._store,
            self._clock,
            self._mint,
            self._ownership,
            self.triage,
            blobs=self._blobs,
            template_renderer=self._renderer,
        )

    @cached_property
    def keys(self) -> Keys:
        from intake.service.admin.keys import Keys

        return Keys(self._store, self._clock, self._mint, self._ownership)

    @cached_property
    def submissions(self) -> Submissions:
        from intake.service.admin.listing import Submissions

        return Submissions(self._store, self._clock, self._ownership, signer=self._signer)

    @cached_property
    def triage(self) -> Triage:
        from intake.service.admin.triage import Triage

        return Triage(
            self._store,
            self._clock,
            self._mint,
            self._knowledge,
            blobs=self._blobs,
            signer=self._signer,
            spam_reports=self._spam_reports,
        )

    @cached_property
    def exports(self) -> Exports:
        from intake.service.admin.exports import Exports

        return Exports(self._store, blobs=self._blobs)

    @cached_property
    def privacy(self) -> Privacy:
        from intake.service.admin.erasure import Privacy

        return Privacy(self._store, self._clock, self.triage)

    @cached_property
    def webhooks(self) -> Webhooks:
        from intake.service.admin.webhooks import Webhooks

        return Webhooks(
            self._store,
            self._clock,
            self._mint,
            ownership=self._ownership,
            targets=self._targets,
            tests=self._tests,
            limits=self._limits,
        )

    @cached_property
    def recipients(self) -> Recipients:
        from intake.service.admin.recipients import Recipients

        return Recipients(
            self._store,
            self._clock,
            self._mint,
            ownership=self._ownership,
            tests=self._tests,
            limits=self._limits,
        )

    @cached_property
    def chats(self) -> Chats:
        from intake.service.admin.chat_destinations import Chats

        return Chats(
            self._store,
            self._clock,
            self._mint,
            ownership=self._ownership,
            targets=self._targets,
            tests=self._tests,
            limits=self._limits,
            telegram_api_url=self._telegram_api_url,
        )

    @cached_property
    def deliveries(self) -> Deliveries:
        from intake.service.admin.deliveries import Deliveries

        return Deliveries(self._store, self._clock, self._ownership, self.webhooks)

    @cached_property
    def spam(self) -> SpamFilter:
        from intake.service.admin.spam_filter import SpamFilter

        return SpamFilter(self._store, self._clock, self._knowledge)

    @cached_property
    def activity(self) -> ActivityCounts:
        from intake.service.admin.activity import ActivityCounts

        return ActivityCounts(self._store, self._clock)

    @cached_property
    def _knowledge(self) -> SpamKnowledge:
        """The serving process's, shared with its pipeline, or one of these services' own."""
        if self._given_knowledge is not None:
            return self._given_knowledge
        from intake.service.spam_knowledge import SpamKnowledge

        return SpamKnowledge(self._store.spam, self._store.secrets, self._clock)

    @cached_property
    def _targets(self) -> TargetCheck:
        from intake.service.admin.targets import TargetCheck

        return TargetCheck(allow_private=self._allow_private, resolve=self._resolver)

    @cached_property
    def _tests(self) -> DestinationTests:
        from intake.service.admin.queued_tests import DestinationTests

        return DestinationTests(self._store, self._clock, self._mint)


def owner_services(
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
) -> OwnerServices:
    """The services on `store`. `webhook_resolver`: how a destination's host is resolved
    for its check (None: left for the relay). `spam_knowledge`: the serving process's,
    shared with its pipeline (None: one of their own). `spam_reports`: whether triage is
    reported to Akismet (docs/scoring.md, "Akismet")."""
    return OwnerServices(
        store,
        clock,
        id_source,
        plans,
        webhook_allow_private=webhook_allow_private,
        webhook_resolver=webhook_resolver,
        blobs=blobs,
        signer=signer,
        telegram_api_url=telegram_api_url,
        destination_limits=destination_limits,
        template_renderer=template_renderer,
        spam_knowledge=spam_knowledge,
        spam_reports=spam_reports,
    )
