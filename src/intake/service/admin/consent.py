"""A notification recipient's consent. An address an owner adds (over the API or in the
dashboard) is pending: it gets one mail, asking it to confirm or decline, and nothing
else (no submission, no test) until it confirms. A workspace asks at most ten addresses
an hour, so removing and adding an address again cannot mail it over and over. An
address of a member of the workspace who has signed in (set a password through a link
sent to it) is confirmed at once: it proved it is theirs. The operator's `intake notify
add` adds confirmed recipients: the operator vouches."""

from __future__ import annotations

from attrs import frozen

from intake.domain import ids
from intake.domain.deliveries import DestinationKind, NotificationRecipient, RecipientStatus
from intake.domain.destination_limits import CONSENT_WINDOWS
from intake.domain.model import Form, Workspace
from intake.domain.recipient_consent import consent_event, link_hash
from intake.domain.users import InvalidEmail, normalise_email
from intake.service.admin.destinations import DestinationAdmin
from intake.service.admin.errors import TooSoon
from intake.service.admin.ownership import OwnershipAdmin
from intake.service.admin.queued_tests import QueuedTestAdmin

_TOKEN_BYTES = 24
CONSENTS_PER_HOUR = CONSENT_WINDOWS[0].count
MAX_TOKEN = 100  # far longer than any link intake makes


@frozen
class ConsentAsked:
    """What a consent link asks: to mail `recipient` about `form`'s submissions."""

    recipient: NotificationRecipient
    form: Form
    workspace: Workspace


class ConsentAdmin(DestinationAdmin, OwnershipAdmin, QueuedTestAdmin):
    async def add_owned_recipient(
        self, workspace_id: str, form_id: str, email: str, *, added_by: str = ""
    ) -> NotificationRecipient:
        """A recipient an owner adds: confirmed when the address is a signed-in member's
        of the workspace, else pending, with its one consent mail queued. `added_by`
        names who added it, in that mail."""
        await self.owned_form(workspace_id, form_id)
        if await self._a_member(workspace_id, email):
            return await self.add_recipient(form_id, email)
        token = ids.encode_base32(int.from_bytes(self._ids.random_bytes(_TOKEN_BYTES), "big"), 39)
        recipient = await self.add_recipient(form_id, email, confirm_hash=link_hash(token))
        event = consent_event(
            self._event_id(),
            recipient,
            workspace_id,
            token=token,
            added_by=added_by,
            now=self._clock.now(),
        )
        try:
            await self._queue(event, DestinationKind.EMAIL, recipient.recipient_id)
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

    async def _a_member(self, workspace_id: str, email: str) -> bool:
        try:
            user = await self._store.users.find_by_email(normalise_email(email))
        except InvalidEmail:
            return False
        if user is None or user.password_hash is None:
            return False
        memberships = await self._store.users.memberships(user.user_id)
        return any(m.workspace_id == workspace_id for m in memberships)

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

    async def _asked(self, recipient: NotificationRecipient) -> ConsentAsked | None:
        form = await self._store.forms.get(recipient.form_id)
        workspace = None if form is None else await self._store.workspaces.get(form.workspace_id)
        if form is None or workspace is None:
            return None
        return ConsentAsked(recipient, form, workspace)
