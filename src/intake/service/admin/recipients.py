"""A form's notification recipients and their consent. An address the operator adds
(`intake notify add`) is confirmed: the operator vouches. An address an owner adds (over
the API or in the dashboard) is pending: it gets one mail, asking it to confirm or
decline, and nothing else (no submission, no test) until it confirms. A workspace asks at
most ten addresses an hour, so removing and adding an address again cannot mail it over
and over. An address of a member of the workspace who has signed in (set a password
through a link sent to it) is confirmed at once: it proved it is theirs."""

from __future__ import annotations

from attrs import frozen

from intake.domain import ids
from intake.domain.deliveries import DestinationKind, NotificationRecipient, RecipientStatus
from intake.domain.destination_limits import CONSENT_WINDOWS, DestinationLimits, LimitReached
from intake.domain.listing import DEFAULT_PAGE
from intake.domain.model import Form, Workspace
from intake.domain.recipient_consent import consent_event, link_hash
from intake.domain.users import InvalidEmail, normalise_email
from intake.domain.validation import is_email
from intake.ports.clock import Clock
from intake.ports.deliveries import DeliveryRecord
from intake.ports.store import Store
from intake.service.admin.bounds import RECIPIENTS_BOUND, form_full
from intake.service.admin.errors import AdminError, NotFoundError, TooSoon
from intake.service.admin.forms import live_form
from intake.service.admin.mint import IdMint
from intake.service.admin.ownership import Ownership, check_plausible_id
from intake.service.admin.queued_tests import DestinationTests
from intake.service.admin.short_lists import NO_TIME, Position, ShortPage, short_page

_TOKEN_BYTES = 24
CONSENTS_PER_HOUR = CONSENT_WINDOWS[0].count
MAX_TOKEN = 100  # far longer than any link intake makes
WHAT = "notification recipient"


@frozen
class ConsentAsked:
    """What a consent link asks: to mail `recipient` about `form`'s submissions."""

    recipient: NotificationRecipient
    form: Form
    workspace: Workspace


class Recipients:
    def __init__(
        self,
        store: Store,
        clock: Clock,
        mint: IdMint,
        *,
        ownership: Ownership,
        tests: DestinationTests,
        limits: DestinationLimits,
    ) -> None:
        self._store = store
        self._clock = clock
        self._mint = mint
        self._owned = ownership
        self._tests = tests
        self._limits = limits

    async def add(
        self, form_id: str, email: str, *, confirm_hash: str | None = None
    ) -> NotificationRecipient:
        """A recipient for the form: confirmed at once (the operator vouches for an
        address `intake notify add` names), or pending until the link whose hash is
        `confirm_hash` is answered."""
        await live_form(self._store.forms, form_id)
        address = email.strip()
        if not is_email(address):
            raise AdminError(f"not an email address: {email!r}", field="email")
        taken = f"{address} is already notified for form {form_id}"
        existing = await self._store.destinations.list_recipients(form_id)
        # Two rows would mean two mails for every submission; addresses differing only
        # in case reach the same mailbox in practice.
        if any(r.email.lower() == address.lower() for r in existing):
            raise AdminError(taken, field="email")
        recipient = NotificationRecipient(
            recipient_id=self._mint.id("rcpt"),
            form_id=form_id,
            email=address,
            created_at=self._clock.now(),
            status=RecipientStatus.CONFIRMED if confirm_hash is None else RecipientStatus.PENDING,
            confirm_hash=confirm_hash,
        )
        bound = self._limits.recipients
        try:
            await self._store.destinations.add_recipient(recipient, at_most=bound)
        except LimitReached:
            raise form_full("notification recipients", bound, RECIPIENTS_BOUND, "email") from None
        except ValueError:  # the store's own check, against an `add` at the same moment
            raise AdminError(taken, field="email") from None
        return recipient

    async def all(self, form_id: str) -> list[NotificationRecipient]:
        """The form's recipients, whatever their consent."""
        await live_form(self._store.forms, form_id)
        return await self._store.destinations.list_recipients(form_id)

    async def remove(self, recipient_id: str) -> None:
        """Removes the recipient; its undelivered mail is dropped with it."""
        if not await self._store.destinations.remove_recipient(recipient_id):
            raise NotFoundError(f"no {WHAT} {recipient_id!r}")

    async def test(self, recipient_id: str) -> DeliveryRecord:
        """Queues a `mail.test` to this recipient only (queued_tests.py): any
        workspace's, for an operator (`intake notify test`)."""
        check_plausible_id(recipient_id, WHAT)
        recipient = await self._store.destinations.get_recipient(recipient_id)
        if recipient is None:
            raise NotFoundError(f"no {WHAT} {recipient_id!r}")
        form = await live_form(self._store.forms, recipient.form_id)
        return await self._tests.mail(recipient, form.workspace_id)

    async def owned(self, workspace_id: str, recipient_id: str) -> NotificationRecipient:
        """The workspace's recipient `recipient_id` (ownership.py's rule)."""
        return await self._owned.recipient(workspace_id, recipient_id)

    async def page(
        self, workspace_id: str, form_id: str, limit: int = DEFAULT_PAGE, cursor: str | None = None
    ) -> ShortPage[NotificationRecipient]:
        """`limit` of the workspace's form's recipients after `cursor`, newest first."""
        await self._owned.form(workspace_id, form_id)
        recipients = await self._store.destinations.list_recipients(form_id)
        return short_page(recipients, _position, limit, cursor)

    async def add_owned(
        self, workspace_id: str, form_id: str, email: str, *, added_by: str = ""
    ) -> NotificationRecipient:
        """A recipient an owner adds: confirmed when the address is a signed-in member's
        of the workspace, else pending, with its one consent mail queued. `added_by`
        names who added it, in that mail."""
        await self._owned.form(workspace_id, form_id)
        if await self._a_member(workspace_id, email):
            return await self.add(form_id, email)
        token = ids.encode_base32(int.from_bytes(self._mint.random_bytes(_TOKEN_BYTES), "big"), 39)
        recipient = await self.add(form_id, email, confirm_hash=link_hash(token))
        event = consent_event(
            self._mint.event_id(),
            recipient,
            workspace_id,
            token=token,
            added_by=added_by,
            now=self._clock.now(),
        )
        try:
            await self._tests.queue(event, DestinationKind.EMAIL, recipient.recipient_id)
        except BaseException as failed:
            # Nothing half-made: a pending recipient that was never asked stays nowhere.
            await self._store.destinations.remove_recipient(recipient.recipient_id)
            if isinstance(failed, TooSoon):
                raise TooSoon(
                    "this workspace asked as many addresses to confirm as it may in an hour "
                    f"({CONSENTS_PER_HOUR}): try again in {failed.retry_after} s",
                    field="email",
                    retry_after=failed.retry_after,
                ) from None
            raise
        return recipient

    async def remove_owned(self, workspace_id: str, recipient_id: str) -> None:
        """`remove` of the workspace's recipient."""
        recipient = await self.owned(workspace_id, recipient_id)
        await self.remove(recipient.recipient_id)

    async def test_owned(self, workspace_id: str, recipient_id: str) -> DeliveryRecord:
        """Queues a `mail.test` to the workspace's recipient only."""
        recipient = await self.owned(workspace_id, recipient_id)
        return await self._tests.mail(recipient, workspace_id)

    async def consent_asked(self, token: str) -> ConsentAsked | None:
        """What the link `token` asks, while it is pending; None for any other link."""
        if not 0 < len(token) <= MAX_TOKEN or not token.isascii() or not token.isalnum():
            return None
        recipient = await self._store.destinations.pending_recipient(link_hash(token))
        return None if recipient is None else await self._asked(recipient)

    async def answer_consent(self, token: str, *, accept: bool) -> ConsentAsked | None:
        """Confirms (or declines) the recipient of `token`, once; None for a link that
        is unknown or answered already."""
        if await self.consent_asked(token) is None:
            return None
        status = RecipientStatus.CONFIRMED if accept else RecipientStatus.DECLINED
        answered = await self._store.destinations.answer_recipient(link_hash(token), status)
        return None if answered is None else await self._asked(answered)

    async def _a_member(self, workspace_id: str, email: str) -> bool:
        try:
            user = await self._store.users.find_by_email(normalise_email(email))
        except InvalidEmail:
            return False
        if user is None or user.password_hash is None:
            return False
        memberships = await self._store.users.memberships(user.user_id)
        return any(m.workspace_id == workspace_id for m in memberships)

    async def _asked(self, recipient: NotificationRecipient) -> ConsentAsked | None:
        form = await self._store.forms.get(recipient.form_id)
        workspace = None if form is None else await self._store.workspaces.get(form.workspace_id)
        if form is None or workspace is None:
            return None
        return ConsentAsked(recipient, form, workspace)


def _position(recipient: NotificationRecipient) -> Position:
    return (recipient.created_at or NO_TIME, recipient.recipient_id)
