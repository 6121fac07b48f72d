"""A Microsoft Teams incoming-webhook message: an Adaptive Card in the message envelope.

Every text is markdown-escaped; no `<at>` mention entity is ever sent, so nobody is
notified whatever the text says.
"""

from __future__ import annotations

import json

from intake.domain.chat_messages import ChatMessage
from intake.domain.chat_text import fit, teams_markdown

# Teams refuses a message over about 28 KB; this leaves room for the envelope's own.
MAX_PAYLOAD_BYTES = 27_000
MAX_FACT_VALUE = 2000
MAX_FACT_TITLE = 200
MAX_TEXT = 2000
CARD_SCHEMA = "http://adaptivecards.io/schemas/adaptive-card.json"
CARD_CONTENT_TYPE = "application/vnd.microsoft.card.adaptive"


def teams_payload(message: ChatMessage) -> dict[str, object]:
    facts = [
        {
            "title": fit(name, teams_markdown, MAX_FACT_TITLE),
            "value": fit(value, teams_markdown, MAX_FACT_VALUE),
        }
        for name, value in message.fields
    ]
    payload = _payload(message, facts)
    if _size(payload) <= MAX_PAYLOAD_BYTES:
        return payload
    # Too big: as many facts as fit, then one saying how many did not. Sized once each
    # (a JSON text and a comma), not the whole card again for every fact dropped.
    more = {"title": "…", "value": f"and {len(facts)} more fields"}
    room = MAX_PAYLOAD_BYTES - _size(_payload(message, [more]))
    kept = 0
    for fact in facts:
        room -= len(json.dumps(fact, ensure_ascii=False, separators=(",", ":")).encode()) + 1
        if room < 0:
            break
        kept += 1
    more = {"title": "…", "value": f"and {len(facts) - kept} more fields"}
    return _payload(message, [*facts[:kept], more])


def _payload(message: ChatMessage, facts: list[dict[str, str]]) -> dict[str, object]:
    body: list[dict[str, object]] = [
        {
            "type": "TextBlock",
            "text": fit(message.title, teams_markdown, MAX_TEXT),
            "weight": "Bolder",
            "size": "Medium",
            "wrap": True,
        },
        {"type": "FactSet", "facts": facts},
    ]
    if message.footer:
        body.append(
            {
                "type": "TextBlock",
                "text": fit(message.footer, teams_markdown, MAX_TEXT),
                "isSubtle": True,
                "size": "Small",
                "wrap": True,
            }
        )
    card: dict[str, object] = {
        "$schema": CARD_SCHEMA,
        "type": "AdaptiveCard",
        "version": "1.4",
        "body": body,
    }
    if message.link is not None:
        card["actions"] = [
            {"type": "Action.OpenUrl", "title": "Open in the dashboard", "url": message.link}
        ]
    attachment = {"contentType": CARD_CONTENT_TYPE, "contentUrl": None, "content": card}
    return {"type": "message", "attachments": [attachment]}


def _size(payload: dict[str, object]) -> int:
    return len(json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode())
