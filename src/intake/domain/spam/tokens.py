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
from itertools import islice, repeat
from typing import NamedTuple

from intake.domain.model import FieldData, texts_of

try:  # the native tokenizer, when it was built (domain/native); the Python is its reference
    from intake.domain.native import links as _native_links
    from intake.domain.native import words as _native_words
except ImportError:  # pragma: no cover - an install without a C compiler
    _native_links = _native_words = None  # type: ignore[assignment]

MAX_CHARS = 4_000
MAX_TOKENS = 300
MAX_WORD = 24
MAX_NUMBER = 6
MAX_FIELD_NAME = 40
# Words are what lies between spaces once punctuation is a space: one pass of C, where a
# pattern would take several times as long. Dots, apostrophes, @, $ and % stay inside
# words (prices, versions, host names, contractions); they are trimmed from the edges.
_SPACES = str.maketrans(dict.fromkeys('!"#&()*+,/:;<=>?[\\]^`{|}~\u00a0\u200b', " "))
_EDGES = ".'-@_%$"
_EDGE_SETS = repeat(_EDGES)  # str.strip's second argument, for map
# Read in the lowered text: a pattern without IGNORECASE runs three times as fast.
_LINK = re.compile(r"(?:https?://|www\.)([^\s/?#<>\"'\]\)]+)")
_MARKUP = re.compile(r"<[a-z!/][^>]{0,200}>", re.IGNORECASE)


def _bucket(n: int) -> int:
    """A number's size, not its value: 0, 1, 2-3, 4-7, ..."""
    return n.bit_length()


def _word_tokens(text: str, prefix: str, out: dict[str, None]) -> None:
    """Adds the words of `text`, the same ones in every process whatever their number
    (up to MAX_TOKENS in all), so that what a submission taught can be unlearned exactly.
    Comprehensions, not a loop of branches: this is most of a submission's scoring. (A
    map over a bound comparison, such as range.__contains__, runs slower than they do.)"""
    room = MAX_TOKENS - len(out)
    if room <= 0:
        return
    words = list(map(str.strip, dict.fromkeys(text.translate(_SPACES).split()), _EDGE_SETS))
    # A short number is a price, a year or a model; a long one an id or a phone number,
    # which says something only by its size.
    found = [
        w if len(w) <= MAX_NUMBER or not w.isdigit() else f"#{len(w)}"
        for w in words
        if 2 < len(w) <= MAX_WORD
    ]
    # SpamBayes's "skip" tokens: a long run says something by its start and size. Both
    # kinds below are rare: one pass of C tells whether to look for them.
    if words and max(map(len, words)) > MAX_WORD:
        found += [f"long:{w[0]}{_bucket(len(w))}" for w in words if len(w) > MAX_WORD]
    if not text.isascii():  # two letters of a script written without spaces
        found += [w for w in words if len(w) == 2 and not w.isascii()]
    if prefix:
        found = [prefix + w for w in found]
    fresh = dict.fromkeys(found)
    if len(fresh) > room:
        fresh = dict.fromkeys(islice(fresh, room))
    out.update(fresh)


def _with_words(listed: dict[str, None], subject: str, body: str) -> list[str]:
    """The tokens with the subject's words (marked apart) and the body's, listed. In C:
    native.words.with_words, which needs no dict, as no word can be a token already
    found: every other kind holds a colon after a prefix of its own, and words none."""
    out = dict(listed)
    if subject:
        _word_tokens(subject, "subject:", out)
    _word_tokens(body, "", out)
    return list(out)


def _host_tokens(host: str, out: dict[str, None]) -> None:
    host = host.lower().rstrip(".").split("@")[-1].split(":")[0]
    if not host:
        return
    labels = host.split(".")
    out["host:" + host[:80]] = None
    if len(labels) > 2:
        out["host:" + ".".join(labels[-2:])[:80]] = None
    out["tld:" + labels[-1][:20]] = None


def _hosts_tokens(links: list[str], out: dict[str, None]) -> None:
    for host in links[:20]:
        _host_tokens(host, out)


def _bounded_texts(data: FieldData) -> list[str]:
    """The values' texts, field by field in name order (a store may keep fields in
    another order than they came in), up to MAX_CHARS in all."""
    budget = MAX_CHARS
    texts: list[str] = []
    for name in sorted(data):
        value = data[name]
        # Most values are a str: no generator for them.
        for text in (value,) if type(value) is str else texts_of(value):
            if budget <= 0:
                return texts
            texts.append(text[:budget])
            budget -= len(texts[-1])
    return texts


_links = _LINK.findall if _native_links is None else _native_links.links
_hosts = _hosts_tokens if _native_links is None else _native_links.host_tokens
_listed = _with_words if _native_words is None else _native_words.with_words


class TokenParts(NamedTuple):
    """A submission's tokens before its words are read: those of every other kind, in
    order, then the lowered subject and body whose words follow them (`listed`)."""

    others: dict[str, None]
    subject: str
    body: str

    def listed(self) -> list[str]:
        return _listed(self.others, self.subject, self.body)


def token_parts(
    data: FieldData,
    subject: str | None = None,
    reply_to: str | None = None,
    findings: tuple[str, ...] = (),
) -> TokenParts:
    """What tokens() lists, with the words not yet read: the classifier reads them
    straight from the text where it can (classifier.judge_text)."""
    out: dict[str, None] = {}
    for name in sorted(data)[:20]:
        out["field:" + name.lower()[:MAX_FIELD_NAME]] = None
    body = "\n".join(_bounded_texts(data))
    lowered = body.lower()
    links = _links(lowered) if "http" in lowered or "www." in lowered else []
    _hosts(links, out)
    if reply_to and "@" in reply_to:
        address = reply_to.lower()[:120]
        out["from:" + address] = None
        out["from:" + address.rsplit("@", 1)[1]] = None
    out[f"shape:fields:{min(len(data), 12)}"] = None
    out[f"shape:length:{_bucket(len(body))}"] = None
    out[f"shape:links:{min(len(links), 6)}"] = None
    if "<" in body and _MARKUP.search(body):
        out["shape:markup"] = None
    if not body.isascii():
        # How much of it is outside ASCII, in eighths: UTF-8's extra bytes, counted in C.
        extra = len(body.encode("utf-8", "surrogatepass")) - len(body)
        out[f"shape:non-ascii:{min(8, extra * 8 // len(body))}"] = None
    for finding in findings:
        out["heuristic:" + finding.split(":", 1)[0]] = None
    return TokenParts(out, subject[:400].lower() if subject else "", lowered)


def tokens(
    data: FieldData,
    subject: str | None = None,
    reply_to: str | None = None,
    findings: tuple[str, ...] = (),
) -> list[str]:
    """The distinct tokens of one submission, the same in every process, in a fixed
    order. `findings` are the heuristics' reasons (scoring.findings)."""
    return token_parts(data, subject, reply_to, findings).listed()
