"""Reading an application/json body, and checking fields handed over in-process."""

from __future__ import annotations

import json
import math

from intake.domain.limits import PayloadLimits
from intake.domain.model import FieldData, FieldValue
from intake.domain.payload.budget import Budget, malformed, too_large, utf8_len
from intake.domain.payload.content import ContentType, ParsedBody, decode_text


def _reject_constant(_: str) -> float:
    raise ValueError("NaN and Infinity are not JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError("a number too large for a double, such as 1e400, is refused")
    return value


def _measure_json(value: FieldValue, budget: Budget, nesting: int) -> int:
    """Checks the limits on one JSON value and returns its depth: objects count, and so
    do arrays that hold containers; an array of scalars is a repeated name, not a level.
    `nesting` is how many containers enclose the value; it stops runaway recursion early,
    since nothing within the depth limit nests more than max_depth + 1 containers."""
    if isinstance(value, dict):
        if nesting > budget.limits.max_depth:
            raise too_large()
        deepest = 0
        for key, item in value.items():
            budget.name(key)
            deepest = max(deepest, _measure_json(item, budget, nesting + 1))
        return 1 + deepest
    if isinstance(value, list):
        if nesting > budget.limits.max_depth:
            raise too_large()
        deepest = 0
        for index, item in enumerate(value):
            if index:
                budget.fields += 1  # each further value of a name counts as a field received
                if budget.fields > budget.limits.max_fields:
                    raise too_large()
            deepest = max(deepest, _measure_json(item, budget, nesting + 1))
        return 1 + deepest if deepest else 0
    if isinstance(value, str):
        budget.text(utf8_len(value))
    else:
        budget.text(len(json.dumps(value)))
    return 0


def parse_json(body: bytes, content_type: ContentType, limits: PayloadLimits) -> ParsedBody:
    text = decode_text(body, content_type.charset)
    try:
        document = json.loads(text, parse_constant=_reject_constant, parse_float=_finite_float)
    except RecursionError:
        raise too_large() from None  # nested far past the depth limit
    except ValueError:
        raise malformed() from None
    if not isinstance(document, dict):
        raise malformed()
    budget = Budget(limits)
    if _measure_json(document, budget, 0) > limits.max_depth:
        raise too_large()
    return ParsedBody(data=document)


def check_fields(data: FieldData, limits: PayloadLimits) -> ParsedBody:
    """Applies the limits to fields handed over in-process rather than as a body."""
    budget = Budget(limits)
    deepest = 0
    for name, value in data.items():
        budget.name(name)
        deepest = max(deepest, _measure_json(value, budget, 1))
    if 1 + deepest > limits.max_depth:
        raise too_large()
    return ParsedBody(data=data)
