"""Where a form's submissions are delivered: its webhook endpoints and notification
recipients."""

from __future__ import annotations

from attrs import frozen

from intake.domain import ids
from intake.domain.deliveries import NotificationRecipient, RecipientStatus, WebhookEndpoint
from intake.domain.destination_limits import LimitReached
from intake.domain.validation import is_email
from intake.domain.webhook_targets import (
    AlreadyAnEndpoint,
    TargetNotPublic,
    TargetRefused,
    TargetUnresolved,
    check_target,
)
from intake.service.admin.errors import AdminError, NotFoundError
from intake.service.admin.forms import FormAdmin

# The operator's settings of each bound (config/destination_variables.py), named in the
# refusal so an owner knows whom to ask.
RECIPIENTS_BOUND = "INTAKE_MAX_RECIPIENTS_PER_FORM"
WEBHOOKS_BOUND = "INTAKE_MAX_WEBHOOKS_PER_FORM"
CHATS_BOUND = "INTAKE_MAX_CHAT_DESTINATIONS_PER_FORM"


def form_full(what: str, bound: int, variable: str, field: str) -> AdminError:
    """The refusal of one destination more than the form may have."""
    return AdminError(
        f"this form has {bound} {what}, the most a form may have here "
        f"(the operator's {variable}): remove one first",
        field=field,
    )


ALREADY_AN_ENDPOINT = "this form has an endpoint at this URL already"


@frozen
class CreatedEndpoint:
    endpoint: WebhookEndpoint
    secret: str  # shown once; kept to sign with, never printed again


class DestinationAdmin(FormAdmin):
    async def add_webhook(
        self, form_id: str, url: str, *, include_flagged: bool = False
    ) -> CreatedEndpoint:
        await self.form(form_id)
        secret = ids.webhook_secret(self._ids.random_bytes(ids.SECRET_RANDOM_BYTES))
        endpoint = WebhookEndpoint(
            endpoint_id=self._id("wh"),
            form_id=form_id,
            url=await self._webhook_url(url),
            secret=secret,
            include_flagged=include_flagged,
            created_at=self._clock.now(),
        )
        try:
            await self._store.destinations.add_endpoint(
                endpoint, at_most=self._destination_limits.webhooks
            )
        except LimitReached:
            raise form_full(
                "webhook endpoints", self._destination_limits.webhooks, WEBHOOKS_BOUND, "url"
            ) from None
        except AlreadyAnEndpoint:
            # Two would deliver every event twice. Never the URL: it may hold a token.
            raise AdminError(ALREADY_AN_ENDPOINT, field="url") from None
        return CreatedEndpoint(endpoint, secret)

    async def _webhook_url(self, value: str) -> str:
        """The URL as given, once it passes the rule the relay applies at every delivery
        (domain/webhook_targets.py), so the owner learns of a refusal at once. A name
        that cannot be resolved just now is taken: the relay resolves it again anyway."""
        text = value.strip()
        try:
            await check_target(text, allow_private=self._allow_private, resolve=self._resolve)
        except TargetNotPublic as refused:
            raise AdminError(
                f"{refused} (INTAKE_WEBHOOK_ALLOW_PRIVATE=true allows private and http URLs)",
                field="url",
            ) from None
        except TargetRefused as refused:
            # Never the URL itself: its path or query may carry the receiver's token.
            raise AdminError(str(refused), field="url") from None
        except TargetUnresolved:
            pass
        return text

    async def webhooks(self, form_id: str) -> list[WebhookEndpoint]:
        await self.form(form_id)
        return await self._store.destinations.list_endpoints(form_id)

    async def remove_webhook(self, endpoint_id: str) -> None:
        if not await self._store.destinations.remove_endpoint(endpoint_id):
            raise NotFoundError(f"no webhook endpoint {endpoint_id!r}")

    async def add_recipient(
        self, form_id: str, email: str, *, confirm_hash: str | None = None
    ) -> NotificationRecipient:
        """A recipient for the form: confirmed at once (the operator vouches for an
        address `intake notify add` names), or pending until the link whose hash is
        `confirm_hash` is answered (consent.py)."""
        await self.form(form_id)
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
            recipient_id=self._id("rcpt"),
            form_id=form_id,
            email=address,
            created_at=self._clock.now(),
            status=RecipientStatus.CONFIRMED if confirm_hash is None else RecipientStatus.PENDING,
            confirm_hash=confirm_hash,
        )
        bound = self._destination_limits.recipients
        try:
            await self._store.destinations.add_recipient(recipient, at_most=bound)
        except LimitReached:
            raise form_full("notification recipients", bound, RECIPIENTS_BOUND, "email") from None
        except ValueError:  # the store's own check, against an `add` at the same moment
            raise AdminError(taken, field="email") from None
        return recipient

    async def recipients(self, form_id: str) -> list[NotificationRecipient]:
        await self.form(form_id)
        return await self._store.destinations.list_recipients(form_id)

    async def remove_recipient(self, recipient_id: str) -> None:
        if not await self._store.destinations.remove_recipient(recipient_id):
            raise NotFoundError(f"no notification recipient {recipient_id!r}")
