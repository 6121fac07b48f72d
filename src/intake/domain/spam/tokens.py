"""What the learning filter reads of a submission: its tokens (docs/scoring.md, "Tokens").

- the words of every value and of the subject (the subject's marked apart);
- each link's host and its registrable parent, and the reply-to's domain;
- each field's name, and the shape of the data (how many fields, how long, how many
  links, markup, capitals);
- the heuristics' findings (domain/scoring.py), so that the filter learns their weight.

Bounded: a submission is read up to MAX_CHARS characters and gives at most MAX_TOKENS
distinct tokens, whatever it holds.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from intake.domain.model import FieldData, FieldValue

MAX_CHARS = 12_000
MAX_TOKENS = 400
MAX_WORD = 24
MAX_FIELD_NAME = 40
# A word is a run of letters and digits, with the inner punctuation of prices, versions,
# contractions and host names; its edges' punctuation is dropped.
_WORD = re.compile(r"[$€£]?[^\W_](?:[\w'.@$%-]*[^\W_%$])?%?")
_DIGITS = re.compile(r"[\d.,%$€£-]+")
_LINK = re.compile(r"(?:https?://|www\.)([^\s/?#<>\"'\]\)]+)", re.IGNORECASE)
_MARKUP = re.compile(r"<[a-z!/][^>]{0,200}>", re.IGNORECASE)


def _texts(value: FieldValue) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _texts(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _texts(item)


def _bucket(n: int) -> int:
    """A number's size, not its value: 0, 1, 2-3, 4-7, ..."""
    return n.bit_length()


def _word_tokens(text: str, prefix: str, out: set[str]) -> None:
    for word in _WORD.findall(text):
        if len(word) > MAX_WORD:
            # SpamBayes's "skip" tokens: a long run says something by its start and size.
            out.add(f"{prefix}long:{word[0]}{_bucket(len(word))}")
        elif len(word) > 2 or (len(word) == 2 and not word.isascii()):
            out.add(prefix + ("#" + str(_bucket(len(word))) if _DIGITS.fullmatch(word) else word))
        if len(out) >= MAX_TOKENS:
            return


def _host_tokens(host: str, out: set[str]) -> None:
    host = host.lower().rstrip(".").split("@")[-1].split(":")[0]
    if not host:
        return
    labels = host.split(".")
    out.add("host:" + host[:80])
    if len(labels) > 2:
        out.add("host:" + ".".join(labels[-2:])[:80])
    out.add("tld:" + labels[-1][:20])


def tokens(
    data: FieldData,
    subject: str | None = None,
    reply_to: str | None = None,
    findings: tuple[str, ...] = (),
) -> set[str]:
    """The distinct tokens of one submission. `findings` are the heuristics' reasons."""
    out: set[str] = set()
    budget = MAX_CHARS
    texts: list[str] = []
    for name, value in data.items():
        out.add("field:" + name.lower()[:MAX_FIELD_NAME])
        for text in _texts(value):
            if budget <= 0:
                break
            texts.append(text[:budget])
            budget -= len(texts[-1])
    body = "\n".join(texts)
    lowered = body.lower()
    links = _LINK.findall(body)
    for host in links[:20]:
        _host_tokens(host, out)
    if subject:
        _word_tokens(subject[:400].lower(), "subject:", out)
    if reply_to and "@" in reply_to:
        out.add("from:" + reply_to.rsplit("@", 1)[1].lower()[:80])
    out.add(f"shape:fields:{min(len(data), 12)}")
    out.add(f"shape:length:{_bucket(len(body))}")
    out.add(f"shape:links:{min(len(links), 6)}")
    if _MARKUP.search(body):
        out.add("shape:markup")
    if not body.isascii():
        share = sum(1 for ch in body if ord(ch) > 127) * 8 // max(len(body), 1)
        out.add(f"shape:non-ascii:{share}")
    for finding in findings:
        out.add("heuristic:" + finding.split(":", 1)[0])
    _word_tokens(lowered, "", out)
    return out
