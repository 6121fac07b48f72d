"""How long a value would be, known before it is built, for each way a template can make
a value much longer than what it starts from: formatting with `%`, `format` and
`str.format` (a width is a length), the filters that pad, indent, wrap, join, replace,
batch or slice, and the string methods that pad. Each estimate is an upper bound; the
sandbox refuses one past the limit (budget.refuse_size) before building anything.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from string import Formatter
from typing import Any

from jinja2.exceptions import SecurityError

from intake.adapters.templates.budget import MAX_VALUE_CHARS, made, refuse_size

# A width or precision in a %-format: `%-099.5d`, `%*d`, `%(name)10s`.
_PRINTF_SPEC = re.compile(r"%(?:\([^)]*\))?[#0\- +]*(\*|\d+)?(?:\.(\*|\d+))?")
_DIGITS = re.compile(r"\d+")
# A urlize target or rel, or a tojson indent, past these is no formatting a mail needs.
MAX_DECORATION = 100
MAX_INDENT = 16


def _number(digits: str) -> int:
    if len(digits) > len(str(MAX_VALUE_CHARS)):
        raise SecurityError(f"a width is at most {MAX_VALUE_CHARS}")
    return int(digits)


def _longest(values: Iterable[object]) -> int:
    return max((len(str(value)) for value in values), default=0)


def printf_size(template: str, values: object) -> int:
    """`template % values` at its longest: each conversion the longest value, padded."""
    if isinstance(values, Mapping):
        longest = _longest(values.values())
    elif isinstance(values, tuple | list):
        longest = _longest(values)
    else:
        longest = len(str(values))
    size = len(template)
    for spec in _PRINTF_SPEC.finditer(template):
        width, precision = spec.groups()
        if "*" in (width, precision):
            raise SecurityError("a width taken from the values (*) is not allowed")
        size += longest + sum(_number(part) for part in (width, precision) if part)
    return size


def format_size(template: str, args: Iterable[object], kwargs: Mapping[str, object]) -> int:
    """`template.format(*args, **kwargs)` at its longest, the same way."""
    longest = max(_longest(args), _longest(kwargs.values()))
    size = len(template)
    for _, field, spec, _ in Formatter().parse(template):
        if field is None:
            continue
        if spec and "{" in spec:
            raise SecurityError("a width taken from the values ({...}) is not allowed")
        # Digits in a spec: a width, a precision or a fill character; all counted.
        size += longest + sum(_number(part) for part in _DIGITS.findall(spec or ""))
    return size


def _lines(text: str) -> int:
    return text.count("\n") + 1


def _center(value: object, width: int = 80) -> None:
    refuse_size(max(len(str(value)), width), "a centred value")


def _indent(s: object, width: int | str = 4, *_: object, **__: object) -> None:
    text = str(s)
    step = width if isinstance(width, int) else len(str(width))
    refuse_size(len(text) + _lines(text) * step, "an indented value")


def _wordwrap(
    s: object,
    width: int = 79,
    _break_long_words: bool = True,
    wrapstring: str | None = None,
    *_: object,
    **__: object,
) -> None:
    text = str(s)
    # Two lines together hold more than `width`, so there are at most 2 * len / width.
    lines = 2 * len(text) // max(width, 1) + _lines(text) + 1
    breaking = len("\n" if wrapstring is None else wrapstring)
    refuse_size(len(text) + lines * breaking, "a wrapped value")


def _replace(s: object, old: str, new: str, count: int | None = None) -> None:
    text = str(s)
    times = len(text) + 1 if not old else text.count(str(old))
    if count is not None and count >= 0:
        times = min(times, count)
    refuse_size(len(text) + times * max(len(str(new)) - len(str(old)), 0), "a replaced value")


def _format(value: object, *args: object, **kwargs: object) -> None:
    refuse_size(printf_size(str(value), kwargs or args), "a formatted value")


def _batch(value: object, linecount: int, *_: object, **__: object) -> None:
    refuse_size(linecount, "a batch")


def _slice(value: object, slices: int, *_: object, **__: object) -> None:
    refuse_size(slices, "a slice")


def _decorations(*values: object) -> None:
    for value in values:
        if value is not None and len(str(value)) > MAX_DECORATION:
            raise SecurityError(f"that argument is at most {MAX_DECORATION} characters")


def _urlize(
    value: object,
    _trim_url_limit: object = None,
    _nofollow: object = False,
    target: object = None,
    rel: object = None,
    *_: object,
    **__: object,
) -> None:
    _decorations(target, rel)


def _tojson(value: object, indent: object = None) -> None:
    width = indent if isinstance(indent, int) else len(str(indent or ""))
    if width > MAX_INDENT:
        raise SecurityError(f"a JSON indent is at most {MAX_INDENT}")


# Checks run before a filter, by name, with the filter's own arguments (the value first).
BEFORE: Mapping[str, Callable[..., None]] = {
    "center": _center,
    "indent": _indent,
    "wordwrap": _wordwrap,
    "replace": _replace,
    "format": _format,
    "batch": _batch,
    "slice": _slice,
    "urlize": _urlize,
    "tojson": _tojson,
}


def joined(items: Iterable[Any], separator: object, pick: Callable[[Any], Any] | None) -> list[Any]:
    """What `join` would join (each item, or its attribute picked), each counted, and
    refused before joining when together they would be too long."""
    values = [made(item if pick is None else pick(item)) for item in items]
    size = sum(len(str(value)) for value in values)
    refuse_size(size + len(str(separator)) * max(len(values) - 1, 0), "a joined value")
    return values


def padded_method(name: str, text: str, args: tuple[Any, ...]) -> tuple[Any, ...]:
    """A string method's result refused before it is made: padding (ljust, rjust,
    center, zfill), expanded tabs, replacing, joining and translating; the arguments
    to call it with (what `join` joins, read once)."""
    numbers = [arg for arg in args if isinstance(arg, int) and not isinstance(arg, bool)]
    if name in {"ljust", "rjust", "center", "zfill"} and numbers:
        refuse_size(max(len(text), numbers[0]), "a padded value")
    elif name == "expandtabs":
        tab = numbers[0] if numbers else 8
        refuse_size(len(text) + text.count("\t") * tab, "an expanded value")
    elif name == "replace" and len(args) >= 2:
        _replace(text, str(args[0]), str(args[1]), args[2] if len(args) > 2 else None)
    elif name == "join" and args:
        args = (joined(args[0], text, None), *args[1:])
    elif name == "translate" and args and isinstance(args[0], Mapping):
        longest = max((len(str(to)) for to in args[0].values() if to is not None), default=1)
        refuse_size(len(text) * longest, "a translated value")
    for number in numbers:
        refuse_size(abs(number), "a number given to a method")
    return args
