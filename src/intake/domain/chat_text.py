"""Visitor text made inert for each chat app, and cut to its limits.

Whatever a visitor typed reaches a chat as text and nothing more: no mention that would
notify a channel or a person, no link disguised under other words, no markup. Each app
has its own syntax, so each has its own escape; all of them first drop control
characters (a line break and a tab stay, as a line break and a space) and the
invisible characters that reorder text (bidirectional overrides), which could make a
value read as something else.
"""

from __future__ import annotations

import re
from collections.abc import Callable

# C0 controls but tab and line feed, DEL, C1 controls, and the bidirectional embedding,
# override and isolate marks.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
# Carriage returns become line feeds before the controls go (CRLF: one line break).
_CARRIAGE = re.compile(r"\r\n?")
ELLIPSIS = "…"

# The mentions every app knows by their word alone. A word joiner (invisible, U+2060)
# after the @ keeps them from being read as one; an address or a handle stays readable.
_SPECIAL_MENTION = re.compile(r"@(?=(?:channel|here|everyone|all|someone)\b)", re.IGNORECASE)
_WORD_JOINER = "\u2060"


def plain(text: str) -> str:
    """The text without control characters: line breaks kept, tabs as spaces."""
    text = _CARRIAGE.sub("\n", text).replace("\t", " ")
    return _CONTROL.sub("", text)


def _no_special_mentions(text: str) -> str:
    return _SPECIAL_MENTION.sub("@" + _WORD_JOINER, text)


def slack_mrkdwn(text: str) -> str:
    """For a Slack `mrkdwn` text: `&`, `<`, `>` as Slack's three entities (so no
    `<!channel>`, `<@U123>` or `<url|text>` can be written), and each formatting mark
    (`*`, `_`, `~`, a backtick) and `@` followed by a word joiner, so no pair of marks
    is read as bold, italic, strike or code, and no `@channel` as a mention. (Slack has
    no escape character for marks.)"""
    text = plain(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return re.sub(r"([*_~`@])", "\\1" + _WORD_JOINER, text)


def slack_plain(text: str) -> str:
    """For a Slack `plain_text` object, which Slack never parses for mentions, links or
    markup: control characters dropped, `@channel` and the like broken all the same."""
    return _no_special_mentions(plain(text))


# Every ASCII punctuation mark Discord's markdown (or its mentions, emoji, masked links,
# headings, quotes and lists) gives a meaning to; a backslash before one shows it as it is.
_DISCORD_MARKS = str.maketrans({mark: "\\" + mark for mark in "\\*_~`|<>#-[]()@:!.+="})


def discord_markdown(text: str) -> str:
    """For a Discord embed's text: every mark backslash-escaped, so `**`, `[x](url)`,
    `<@123>`, `<@&role>`, `@everyone`, `# heading` or `> quote` show as typed."""
    return plain(text).translate(_DISCORD_MARKS)


def telegram_html(text: str) -> str:
    """For a Telegram message in HTML parse mode: `&`, `<`, `>` as entities (all that
    mode needs), and `@` followed by a word joiner, so no `@username` in the text
    becomes a mention that notifies its user."""
    text = plain(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return text.replace("@", "@" + _WORD_JOINER)


# What Teams' Adaptive Card markdown reads: emphasis, links, lists, headings, quotes,
# code, and the <at> mention tags.
_TEAMS_MARKS = str.maketrans({mark: "\\" + mark for mark in "\\*_~`[]()#>+-<!.|{}"})


def teams_markdown(text: str) -> str:
    """For an Adaptive Card TextBlock or fact in Teams: every markdown mark
    backslash-escaped, and `@channel` and the like broken (Teams only mentions through
    an `<at>` tag and an entity, which is never sent)."""
    return _no_special_mentions(plain(text).translate(_TEAMS_MARKS))


def fit(text: str, escape: Callable[[str], str], limit: int) -> str:
    """`text` escaped, at most `limit` characters: when too long, the longest beginning
    of it that fits with an ellipsis after. Cut before escaping, so no escape or entity
    is ever split (a lone backslash would escape the ellipsis, a cut entity show)."""
    if len(text) <= limit:  # escaping never shortens text: a longer one cannot fit
        escaped = escape(text)
        if len(escaped) <= limit:
            return escaped
    room = limit - len(ELLIPSIS)
    low, high = 0, min(len(text), max(room, 0))  # escaping never shortens text
    while low < high:
        middle = (low + high + 1) // 2
        if len(escape(text[:middle])) <= room:
            low = middle
        else:
            high = middle - 1
    return escape(text[:low]) + ELLIPSIS if room >= 0 else ELLIPSIS[:limit]
