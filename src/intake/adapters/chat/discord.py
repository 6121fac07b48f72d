"""A Discord webhook message: one embed, its fields the submitted ones.

Every text is markdown-escaped, and `allowed_mentions` with nothing to parse tells
Discord to notify no one whatever the text says.
"""

from __future__ import annotations

from intake.domain.chat_messages import ChatMessage
from intake.domain.chat_text import discord_markdown, fit

# Discord's embed limits.
MAX_TITLE = 256
MAX_FIELDS = 25
MAX_FIELD_NAME = 256
MAX_FIELD_VALUE = 1024
MAX_FOOTER = 2048
MAX_TOTAL = 6000  # title, description, field names and values, and footer, together
_EMPTY = "—"  # a field's name and value may not be empty


def discord_payload(message: ChatMessage) -> dict[str, object]:
    title = fit(message.title, discord_markdown, MAX_TITLE)
    footer = fit(message.footer, discord_markdown, MAX_FOOTER) if message.footer else ""
    fields = [
        {
            "name": fit(name, discord_markdown, MAX_FIELD_NAME) or _EMPTY,
            "value": fit(value, discord_markdown, MAX_FIELD_VALUE) or _EMPTY,
            "inline": False,
        }
        for name, value in message.fields
    ]
    fields = _within(fields, len(title) + len(footer))
    embed: dict[str, object] = {"title": title, "fields": fields}
    if message.link is not None:
        embed["url"] = message.link  # the title links to the submission's page
    if footer:
        embed["footer"] = {"text": footer}
    return {"embeds": [embed], "allowed_mentions": {"parse": []}}


def _within(fields: list[dict[str, object]], used: int) -> list[dict[str, object]]:
    """As many fields as the embed holds (25, and 6000 characters in all with `used`);
    the last place then says how many more there were."""
    total = len(fields)

    def size(kept: list[dict[str, object]]) -> int:
        return used + sum(len(str(f["name"])) + len(str(f["value"])) for f in kept)

    if total <= MAX_FIELDS and size(fields) <= MAX_TOTAL:
        return fields
    kept = fields[: MAX_FIELDS - 1]
    while True:
        more = {"name": "…", "value": f"and {total - len(kept)} more fields", "inline": False}
        if size([*kept, more]) <= MAX_TOTAL or not kept:
            return [*kept, more]
        kept.pop()
