"""What teaching a submission changes in the statistics, before a store writes it.

A submission row remembers what it teaches (`taught`): teaching it the same label again
changes nothing, the other label unlearns the first before learning the second, and an
erasure unlearns what it taught. Every change counts in the workspace's scope and in the
instance's (INSTANCE). The stores write a tally's changes scope by scope, in sorted
order ('' first, then tokens ascending), so that concurrent teaching takes its row locks
in one order and never deadlocks."""

from __future__ import annotations

from collections.abc import Iterable

from attrs import define, field, frozen

from intake.domain.spam.model import INSTANCE, Label


@frozen
class Delta:
    """How much one message's label changes each count: +1 learns, -1 unlearns."""

    spam: int
    ham: int

    @property
    def nothing(self) -> bool:
        return self.spam == 0 and self.ham == 0


NO_CHANGE = Delta(0, 0)


def _one(label: Label, sign: int) -> Delta:
    return Delta(sign, 0) if label is Label.SPAM else Delta(0, sign)


def delta(taught: Label | None, label: Label | None) -> Delta:
    """What moving a submission from teaching `taught` to teaching `label` changes; None
    for either side: nothing (an erasure's `label` is None)."""
    if taught is label:
        return NO_CHANGE
    before = NO_CHANGE if taught is None else _one(taught, -1)
    after = NO_CHANGE if label is None else _one(label, 1)
    return Delta(before.spam + after.spam, before.ham + after.ham)


@define
class ScopeTally:
    """One scope's changes: to its message counts, and to each token's counts."""

    spam_messages: int = 0
    ham_messages: int = 0
    tokens: dict[int, tuple[int, int]] = field(factory=dict)

    def add(self, hashes: Iterable[int], change: Delta) -> None:
        self.spam_messages += change.spam
        self.ham_messages += change.ham
        for token in hashes:
            spam, ham = self.tokens.get(token, (0, 0))
            self.tokens[token] = (spam + change.spam, ham + change.ham)

    def sorted_tokens(self) -> list[tuple[int, int, int]]:
        """(token, spam change, ham change), ascending tokens; none that changes nothing."""
        return [(t, s, h) for t, (s, h) in sorted(self.tokens.items()) if s or h]


class Tally:
    """The changes of several lessons summed per scope (a seed, a batch of settlements),
    written by a store in one transaction."""

    def __init__(self) -> None:
        self._scopes: dict[str, ScopeTally] = {}

    def add(self, workspace_id: str, hashes: Iterable[int], change: Delta) -> None:
        if change.nothing:
            return
        hashes = tuple(hashes)
        for scope in (INSTANCE, workspace_id):
            self._scopes.setdefault(scope, ScopeTally()).add(hashes, change)

    def scopes(self) -> list[tuple[str, ScopeTally]]:
        """Each scope changed, the instance's ('') first, then the workspaces' ascending."""
        return sorted(self._scopes.items())

    def __bool__(self) -> bool:
        return bool(self._scopes)


def taught_label(value: str | None) -> Label | None:
    """A stored `taught` read back."""
    return None if value is None else Label(value)


def stored_label(label: Label | None) -> str | None:
    return None if label is None else label.value
