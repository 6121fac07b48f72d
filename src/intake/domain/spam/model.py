"""What the learning filter knows and what one submission teaches it."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from enum import Enum
from typing import Protocol

from attrs import field, frozen

try:  # the memo and the counts in C, when they were built (domain/native); dicts otherwise
    from intake.domain.native.clues import TokenCounts as _NativeTokenCounts
    from intake.domain.native.clues import WordMemo as _NativeWordMemo
except ImportError:  # pragma: no cover - an install without a C compiler
    _NativeWordMemo = _NativeTokenCounts = None  # type: ignore[assignment,misc]

# The instance-wide layer's scope: every workspace's teaching summed (docs/scoring.md,
# "The instance layer"). No workspace id is empty.
INSTANCE = ""


class Label(Enum):
    """What an owner (or the rule for untouched submissions) says a submission is."""

    SPAM = "spam"
    HAM = "ham"

    @property
    def other(self) -> Label:
        return Label.HAM if self is Label.SPAM else Label.SPAM


def pack(spam: int, ham: int) -> int:
    """A token's two counts in one int: a process holds many of them."""
    return (spam << 32) | ham


def unpack(packed: int) -> tuple[int, int]:
    return packed >> 32, packed & 0xFFFFFFFF


@frozen
class Lesson:
    """What one submission (or one seeded message) teaches: the keyed hashes of its
    distinct tokens, sorted, and its label. Each token counts once per message, as in
    bogofilter's and SpamBayes's statistics."""

    workspace_id: str
    label: Label
    hashes: tuple[int, ...]


class WordMemo(Protocol):
    """Each word's f (classifier.judge_words), remembered for one Statistics: a dict of
    them, or native.clues.WordMemo, which holds them packed and is read with no str made
    for a word."""

    def __len__(self) -> int: ...
    def get(self, word: str, /) -> float | None: ...
    def __setitem__(self, word: str, f: float, /) -> None: ...
    def clear(self) -> None: ...
    def items(self) -> Iterable[tuple[str, float]]: ...


def new_word_memo() -> WordMemo:
    """An empty memo, native where it was built."""
    return {} if _NativeWordMemo is None else _NativeWordMemo()


if _NativeTokenCounts is not None:

    class PackedCounts(_NativeTokenCounts, Mapping[int, int]):
        """A dict's counts packed in C (native/token_counts.h), read as a Mapping: a
        token's counts are one read of 16 bytes, where a dict's are four reads of objects
        spread over the heap. Its views, `==` and the rest come from Mapping."""

        __slots__ = ()


def packed_counts(tokens: Mapping[int, int]) -> Mapping[int, int]:
    """The counts as scoring reads them fastest: a dict packed in C where it was built,
    else (or with a count that a pack cannot hold) as they are."""
    if _NativeTokenCounts is None or type(tokens) is not dict:
        return tokens
    try:
        return PackedCounts(tokens)
    except (OverflowError, TypeError):  # a key or count past 64 bits, or not an int
        return tokens


def merged_counts(
    held: Mapping[int, int], change: Mapping[int, int], limit: int
) -> Mapping[int, int]:
    """`held` with a change read since (a count of 0: the token is gone), new tokens
    added in the change's order (the most used first) while fewer than `limit` are held.
    Packed counts are merged in C, as the dicts are here."""
    if (
        _NativeTokenCounts is not None
        and isinstance(held, _NativeTokenCounts)
        and isinstance(change, _NativeTokenCounts)
    ):
        return held.merged(change, limit)  # type: ignore[return-value]  # a PackedCounts
    tokens = dict(held)
    for token, packed in change.items():
        if not packed:
            tokens.pop(token, None)
    for token, packed in change.items():
        if packed and (token in tokens or len(tokens) < limit):
            tokens[token] = packed
    return tokens


@frozen
class Statistics:
    """One scope's statistics (a workspace's, or the instance's): how many messages were
    taught as spam and as ham, and for each token hash its packed counts (`pack`).
    `generation` grows with every change, so that a process can ask for what changed."""

    spam_messages: int = 0
    ham_messages: int = 0
    tokens: Mapping[int, int] = field(factory=dict, converter=packed_counts)
    generation: int = 0
    # Each word's probability for these counts, worked out once (classifier.judge_words):
    # right for as long as this object lives, so a change makes a new Statistics. Words
    # live only in a process's memory, never in a store.
    word_memo: WordMemo = field(factory=new_word_memo, init=False, eq=False, repr=False)

    @property
    def messages(self) -> int:
        return self.spam_messages + self.ham_messages


EMPTY = Statistics()


@frozen
class Evidence:
    """What scoring one workspace's submission reads: its own statistics and the
    instance's (which include the workspace's own: the classifier takes them out)."""

    own: Statistics = EMPTY
    instance: Statistics = EMPTY
