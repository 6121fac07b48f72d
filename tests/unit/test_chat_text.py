"""What a visitor typed, made inert for each chat app and cut to its limits
(domain/chat_text.py), and each app's message within that app's limits whatever the
submission (adapters/chat)."""

from __future__ import annotations

import json

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from intake.adapters.chat.discord import discord_payload
from intake.adapters.chat.slack import slack_payload
from intake.adapters.chat.teams import MAX_PAYLOAD_BYTES, teams_payload
from intake.adapters.chat.telegram import telegram_payload
from intake.domain.chat_messages import ChatMessage, submission_message
from intake.domain.chat_text import (
    ELLIPSIS,
    discord_markdown,
    fit,
    plain,
    slack_mrkdwn,
    slack_plain,
    teams_markdown,
    telegram_html,
)

JOINER = "\u2060"


def test_control_characters_go_and_line_breaks_stay() -> None:
    assert plain("a\r\nb\rc\td\x00\x07\x1b[1m\x85\u202eé\u2066") == "a\nb\nc d[1mé"


def test_slack_mrkdwn_writes_no_link_mention_or_mark() -> None:
    escaped = slack_mrkdwn("<!channel> <@U1> <https://x|y> *b* _i_ ~s~ `c` & @here")

    assert "<" not in escaped
    assert ">" not in escaped
    assert "&lt;!channel&gt;" in escaped
    assert "&amp;" in escaped
    for mark in "*_~`@":
        assert escaped.count(mark) == escaped.count(mark + JOINER)


def test_slack_plain_breaks_the_special_mentions_only() -> None:
    assert slack_plain("@channel @Here @everyone ada@example.com") == (
        f"@{JOINER}channel @{JOINER}Here @{JOINER}everyone ada@example.com"
    )


def test_discord_escapes_every_mark() -> None:
    expected = r"\*\*b\*\* \[x\]\(https\://e\) \<\@1\> \@everyone"
    assert discord_markdown("**b** [x](https://e) <@1> @everyone") == expected


def test_telegram_html_escapes_tags_and_entities_and_mentions() -> None:
    assert telegram_html('<a href="x">&</a> @bob') == (
        f'&lt;a href="x"&gt;&amp;&lt;/a&gt; @{JOINER}bob'
    )


def test_teams_escapes_markdown_and_mentions() -> None:
    escaped = teams_markdown("**b** [x](y) <at>Bob</at> @channel")
    assert escaped.startswith(r"\*\*b\*\* \[x\]\(y\) \<at\>Bob\</at\>")
    assert f"@{JOINER}channel" in escaped


@pytest.mark.parametrize("escape", [slack_mrkdwn, discord_markdown, telegram_html, teams_markdown])
@given(text=st.text(max_size=300), limit=st.integers(min_value=1, max_value=120))
@example(text="0\\00", limit=3)  # a cut right after a backslash the escape leaves single
def test_fit_never_exceeds_the_limit_nor_splits_an_escape(escape, text: str, limit: int) -> None:  # type: ignore[no-untyped-def]
    fitted = fit(text, escape, limit)

    assert len(fitted) <= limit
    body = fitted.removesuffix(ELLIPSIS)
    if fitted != escape(text):
        assert escape(text).startswith(body)  # a whole escaped beginning, cut nowhere inside
        if escape("\\") == "\\\\":
            # Where a backslash is written doubled, the cut never falls between the two;
            # where it stays as it is (Slack, Telegram), any backslash may end the body.
            trailing = len(body) - len(body.rstrip("\\"))
            assert trailing % 2 == 0


def _message(fields: int, value: str) -> ChatMessage:
    payload = {
        "type": "submission.created",
        "submission_id": "sub_1",
        "status": "accepted",
        "created_at": "2026-01-01T00:00:00+00:00",
        "data": {f"f{n}": value for n in range(fields)},
    }
    return submission_message(payload, form_name="F", base_url="https://intake.example")


@pytest.mark.parametrize(("fields", "value"), [(1, "x"), (100, "<&*@" * 5000), (30, "é" * 3000)])
def test_every_payload_is_within_its_apps_limits(fields: int, value: str) -> None:
    message = _message(fields, value)

    slack = slack_payload(message)
    assert len(slack["blocks"]) <= 50  # type: ignore[arg-type]
    for block in slack["blocks"]:  # type: ignore[attr-defined]
        if block["type"] == "section":
            assert len(block["text"]["text"]) <= 3000
    embed = discord_payload(message)["embeds"][0]  # type: ignore[index]
    assert len(embed["fields"]) <= 25
    total = len(embed["title"]) + len(embed.get("footer", {}).get("text", ""))
    total += sum(len(f["name"]) + len(f["value"]) for f in embed["fields"])
    assert total <= 6000
    teams = json.dumps(teams_payload(message), ensure_ascii=False, separators=(",", ":"))
    assert len(teams.encode()) <= MAX_PAYLOAD_BYTES
    assert len(telegram_payload(message, "1")["text"]) <= 4096  # type: ignore[arg-type]


def test_a_discord_message_lets_no_mention_notify_anyone() -> None:
    # Escaping alone is not enough: Discord reads `allowed_mentions`, and with nothing to
    # parse notifies no one, whatever a value says.
    message = _message(1, "@everyone <@123> <@&456> @here")

    payload = discord_payload(message)

    assert payload["allowed_mentions"] == {"parse": []}
    (field,) = payload["embeds"][0]["fields"]  # type: ignore[index]
    assert field["value"] == r"\@everyone \<\@123\> \<\@&456\> \@here"
