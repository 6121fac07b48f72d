"""How many destinations of each kind a form may have (domain/destination_limits.py), and
the one refusal of one more, which the webhook endpoints, the recipients and the chat
destinations all give."""

from __future__ import annotations

from intake.service.admin.errors import AdminError

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
