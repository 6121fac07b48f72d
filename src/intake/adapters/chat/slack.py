"""A Slack incoming-webhook message in Block Kit.

Everything a visitor typed goes in `plain_text` objects, which Slack shows as they are:
no mention, link or markup is read in them. Only the fallback `text` (shown in
notifications) is `mrkdwn`, and it holds the form's name, escaped.
"""

from __future__ import annotations

from intake.domain.chat_messages import ChatMessage
from intake.domain.chat_text import fit, slack_mrkdwn, slack_plain

# Slack's limits: 50 blocks a message, 3000 characters a section's text, 150 a header's,
# 75 a button's label, 3000 a button's URL and 40000 the fallback text.
MAX_BLOCKS = 50
MAX_SECTION_TEXT = 3000
MAX_HEADER_TEXT = 150
MAX_CONTEXT_TEXT = 3000
MAX_URL = 3000
# The header, the footer and the link: what is not a field.
_FRAME_BLOCKS = 3


def slack_payload(message: ChatMessage) -> dict[str, object]:
    blocks: list[dict[str, object]] = [
        {"type": "header", "text": _plain(message.title, MAX_HEADER_TEXT)}
    ]
    room = MAX_BLOCKS - _FRAME_BLOCKS
    shown = message.fields if len(message.fields) <= room else message.fields[: room - 1]
    for name, value in shown:
        blocks.append({"type": "section", "text": _plain(f"{name}\n{value}", MAX_SECTION_TEXT)})
    if len(shown) < len(message.fields):
        more = len(message.fields) - len(shown)
        blocks.append(
            {"type": "section", "text": _plain(f"… and {more} more fields", MAX_SECTION_TEXT)}
        )
    if message.footer:
        blocks.append({"type": "context", "elements": [_plain(message.footer, MAX_CONTEXT_TEXT)]})
    if message.link is not None and len(message.link) <= MAX_URL:
        button = {
            "type": "button",
            "text": {"type": "plain_text", "text": "Open in the dashboard"},
            "url": message.link,
        }
        blocks.append({"type": "actions", "elements": [button]})
    return {"text": fit(message.title, slack_mrkdwn, MAX_SECTION_TEXT), "blocks": blocks}


def _plain(text: str, limit: int) -> dict[str, object]:
    # `emoji: false`: a visitor's `:name:` shows as typed, too.
    return {"type": "plain_text", "text": fit(text, slack_plain, limit) or " ", "emoji": False}
