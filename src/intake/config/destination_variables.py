"""The variables that bound how many destinations a form may have, so that one owner
cannot turn a submission into a flood of mail and requests
(domain/destination_limits.py). Declared as variables.py declares the rest, whose table
lists them in its order."""

from __future__ import annotations

from intake.config.variable import Variable, integer
from intake.domain.destination_limits import DEFAULT_MAX_PER_FORM, MAX_PER_FORM

MAX_RECIPIENTS_PER_FORM = Variable(
    "INTAKE_MAX_RECIPIENTS_PER_FORM",
    DEFAULT_MAX_PER_FORM,
    integer(maximum=MAX_PER_FORM),
    "notification recipients one form may have; one more is refused",
)
MAX_WEBHOOKS_PER_FORM = Variable(
    "INTAKE_MAX_WEBHOOKS_PER_FORM",
    DEFAULT_MAX_PER_FORM,
    integer(maximum=MAX_PER_FORM),
    "webhook endpoints one form may have; one more is refused",
)
MAX_CHAT_DESTINATIONS_PER_FORM = Variable(
    "INTAKE_MAX_CHAT_DESTINATIONS_PER_FORM",
    DEFAULT_MAX_PER_FORM,
    integer(maximum=MAX_PER_FORM),
    "chat destinations (Slack, Discord, Teams, Telegram) one form may have; one more is refused",
)
