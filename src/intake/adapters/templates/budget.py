"""What one render may spend, counted by the sandbox (sandbox.py) on every operation a
template makes: the operations themselves (calls, attributes, arithmetic, filters, loop
turns), the characters and items it builds, how deep its calls nest, and the time it
takes. Each limit is far past what a mail needs; a template that reaches one is refused
with words that say which, before the value that would pass it is built wherever its
size can be known beforehand (sandbox.py and filters.py check those), and after
otherwise.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from jinja2.exceptions import SecurityError

from intake.domain.mail_templates import MAX_OUTPUT_CHARS

# No value a template builds (a text, a list) is longer than a whole mail may be.
MAX_VALUE_CHARS = MAX_OUTPUT_CHARS
# An integer's size: 2**1024 has 309 digits, far more than any mail shows.
MAX_INT_BITS = 1024
# What all the values one render builds add up to, in characters and items.
MAX_MADE = 2_000_000
MAX_OPERATIONS = 200_000
MAX_CALL_DEPTH = 20
MAX_RENDER_SECONDS = 1.0

_SIZED = (str, bytes, list, tuple, dict, set, frozenset)


class Budget:
    """One render's account. Not shared between renders: each has its own."""

    def __init__(self, seconds: float = MAX_RENDER_SECONDS) -> None:
        self.deadline = time.monotonic() + seconds
        self.operations = 0
        self.made = 0
        self.depth = 0

    def tick(self) -> None:
        self.operations += 1
        if self.operations > MAX_OPERATIONS:
            raise SecurityError(f"a template makes at most {MAX_OPERATIONS} operations")
        # Every operation: one may cost milliseconds (sorting 100000 items), so waiting
        # a few to read the clock could overrun the deadline many times over.
        if time.monotonic() > self.deadline:
            raise SecurityError("a template takes too long to render")

    def spend(self, size: int) -> None:
        if size > MAX_VALUE_CHARS:
            raise SecurityError(f"a value is at most {MAX_VALUE_CHARS} characters or items")
        self.made += size
        if self.made > MAX_MADE:
            raise SecurityError(f"a template builds at most {MAX_MADE} characters in all")


_CURRENT: ContextVar[Budget | None] = ContextVar("template_budget", default=None)


@contextmanager
def budget_for_one_render(seconds: float = MAX_RENDER_SECONDS) -> Iterator[Budget]:
    budget = Budget(seconds)
    token = _CURRENT.set(budget)
    try:
        yield budget
    finally:
        _CURRENT.reset(token)


def current() -> Budget:
    budget = _CURRENT.get()
    if budget is None:  # a template runs only inside render(), which sets one
        raise SecurityError("a template runs only when rendered")
    return budget


def refuse_size(size: int, what: str = "a value") -> None:
    """Refuses, before it is built, a value that would be `size` long."""
    if size > MAX_VALUE_CHARS:
        raise SecurityError(f"{what} would be longer than {MAX_VALUE_CHARS} characters")


def size_of(value: object) -> int:
    """A value's size: its length, with its items' lengths one level down (a list of
    long texts is as big as they are)."""
    if not isinstance(value, _SIZED):
        return 0
    size = len(value)
    if isinstance(value, list | tuple | set | frozenset):
        size += sum(len(item) for item in value if isinstance(item, _SIZED))
    elif isinstance(value, Mapping):
        size += sum(len(item) for item in value.values() if isinstance(item, _SIZED))
    return size


def made(value: Any) -> Any:
    """`value`, once it is counted: an integer past MAX_INT_BITS and a value past
    MAX_VALUE_CHARS are refused, and a lazy sequence is counted item by item as it is
    read."""
    budget = current()
    budget.tick()
    if isinstance(value, int) and not isinstance(value, bool):
        if value.bit_length() > MAX_INT_BITS:
            raise SecurityError(f"a number is at most {MAX_INT_BITS} bits")
        return value
    if isinstance(value, _SIZED):
        budget.spend(size_of(value))
        return value
    if isinstance(value, Iterator):
        return counted(value)
    return value


def counted(items: Iterable[Any]) -> Iterator[Any]:
    """Each item of `items` counted as an operation, and its size as made, as it is read:
    what a loop turn or a lazy filter (map, select, batch...) costs."""
    for item in items:
        yield made(item)
