"""A Telegram Bot API `sendMessage` in HTML parse mode.

Every text is HTML-escaped, so no tag (a link among them) can be written, and each `@`
is followed by a word joiner, so no `@username` notifies anyone. Link previews are off:
a visitor's URL is shown, never fetched.
"""

from __future__ import annotations

import html

from intake.domain.chat_messages import ChatMessage
from intake.domain.chat_text import fit, telegram_html

# A message's text is 4096 characters at most (after the entities are parsed; the
# HTML is counted whole here, which is never less).
MAX_TEXT = 4096
MAX_FIELD_VALUE = 1000
MAX_LINE = 200


def telegram_payload(message: ChatMessage, chat_id: str) -> dict[str, object]:
    head = f"<b>{fit(message.title, telegram_html, MAX_LINE)}</b>\n\n"
    tail = ""
    if message.footer:
        tail += f"<i>{fit(message.footer, telegram_html, MAX_LINE)}</i>\n"
    if message.link is not None:
        tail += f'<a href="{html.escape(message.link, quote=True)}">Open in the dashboard</a>'
    parts: list[str] = []
    used = len(head) + len(tail)
    for index, (name, value) in enumerate(message.fields):
        part = (
            f"<b>{fit(name, telegram_html, MAX_LINE)}</b>\n"
            f"{fit(value, telegram_html, MAX_FIELD_VALUE)}\n\n"
        )
        more = f"… and {len(message.fields) - index} more fields\n\n"
        last = index == len(message.fields) - 1
        if used + len(part) + (0 if last else len(more)) > MAX_TEXT:
            parts.append(more)
            break
        parts.append(part)
        used += len(part)
    return {
        "chat_id": chat_id,
        "text": head + "".join(parts) + tail,
        "parse_mode": "HTML",
        "link_preview_options": {"is_disabled": True},
    }
