"""The owner-side services, one per concern, and the one function that builds them all
from the same inputs: what the `intake` command, the management API, the dashboard and
the library call. Each service is a plain class given what it needs; the rules they share
live once, in the parts they are given: `Ownership` (a workspace reaches only its own
objects), `Workspaces.acting` (a suspended workspace changes nothing), `TargetCheck` (a
destination's URL passes the relay's rule), `DestinationTests` (tests to one destination
are throttled) and the destination limits."""

from __future__ import annotations

from collections.abc import Mapping

from attrs import frozen

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
from intake.service.admin.activity import ActivityCounts
from intake.service.admin.chat_destinations import Chats
from intake.service.admin.deliveries import Deliveries
from intake.service.admin.erasure import Privacy
from intake.service.admin.exports import Exports
from intake.service.admin.forms import Forms
from intake.service.admin.keys import Keys
from intake.service.admin.listing import Submissions
from intake.service.admin.mint import IdMint
from intake.service.admin.ownership import Ownership
from intake.service.admin.queued_tests import DestinationTests
from intake.service.admin.recipients import Recipients
from intake.service.admin.spam_filter import SpamFilter
from intake.service.admin.targets import TargetCheck
from intake.service.admin.triage import Triage
from intake.service.admin.webhooks import Webhooks
from intake.service.admin.workspaces import Workspaces
from intake.service.spam_knowledge import SpamKnowledge


@frozen
class OwnerServices:
    """Every owner-side service, by concern. A composition builds one (`owner_services`)
    and hands each entry point the services it calls."""

    workspaces: Workspaces
    forms: Forms
    keys: Keys
    submissions: Submissions
    triage: Triage
    exports: Exports
    privacy: Privacy
    webhooks: Webhooks
    recipients: Recipients
    chats: Chats
    deliveries: Deliveries
    spam: SpamFilter
    activity: ActivityCounts


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
    mint = IdMint(clock, id_source)
    ownership = Ownership(store)
    knowledge = spam_knowledge
    if knowledge is None:
        knowledge = SpamKnowledge(store.spam, store.secrets, clock)
    triage = Triage(
        store, clock, mint, knowledge, blobs=blobs, signer=signer, spam_reports=spam_reports
    )
    targets = TargetCheck(allow_private=webhook_allow_private, resolve=webhook_resolver)
    tests = DestinationTests(store, clock, mint)
    limits = destination_limits
    webhooks = Webhooks(
        store, clock, mint, ownership=ownership, targets=targets, tests=tests, limits=limits
    )
    return OwnerServices(
        workspaces=Workspaces(store, clock, mint, plans),
        forms=Forms(
            store,
            clock,
            mint,
            ownership,
            triage,
            blobs=blobs,
            template_renderer=template_renderer,
        ),
        keys=Keys(store, clock, mint, ownership),
        submissions=Submissions(store, clock, ownership, signer=signer),
        triage=triage,
        exports=Exports(store, blobs=blobs),
        privacy=Privacy(store, clock, triage),
        webhooks=webhooks,
        recipients=Recipients(store, clock, mint, ownership=ownership, tests=tests, limits=limits),
        chats=Chats(
            store,
            clock,
            mint,
            ownership=ownership,
            targets=targets,
            tests=tests,
            limits=limits,
            telegram_api_url=telegram_api_url,
        ),
        deliveries=Deliveries(store, clock, ownership, webhooks),
        spam=SpamFilter(store, clock, knowledge),
        activity=ActivityCounts(store, clock),
    )
