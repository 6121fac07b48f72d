"""Owners' mail templates: Jinja2 in its sandbox, checked when saved and when shown.

A template sees only the values it is given (mail_context.py): the form's name, the
submission's ids, time and fields, already text. It cannot reach Python's internals
(`''.__class__` and every other name starting with `_` are refused), nor run long: a
`range` holds at most MAX_RANGE numbers, loops nest MAX_LOOP_DEPTH deep at most, a `*`
or `**` cannot make a value past MAX_OUTPUT_CHARS, and rendering stops there. The HTML
part is rendered with autoescaping, so a submitted value shows as text, never markup; the
plain-text part and the subject without it (the subject is then made one line).
"""

from __future__ import annotations

import html
from collections.abc import Iterator, Mapping
from typing import Any

from jinja2 import TemplateError, Undefined, nodes
from jinja2.exceptions import SecurityError
from jinja2.sandbox import SandboxedEnvironment

# A template's own size, and what rendering one may make.
MAX_TEMPLATE_CHARS = 20_000
MAX_OUTPUT_CHARS = 100_000
MAX_RANGE = 1_000
MAX_LOOP_DEPTH = 2


class MailTemplateError(ValueError):
    """A template that does not compile, reaches outside the sandbox or runs away; the
    message says where and why, in words an owner can act on."""


class _StrictAboutInternals(Undefined):
    """A missing field renders as nothing (forms differ in what they send); a refused
    attribute (`__class__`...) is an error, not a silent blank."""

    __slots__ = ()

    def __str__(self) -> str:
        if self._undefined_exception is SecurityError:
            self._fail_with_undefined_error()
        return ""

    def __iter__(self) -> Iterator[Any]:
        if self._undefined_exception is SecurityError:
            self._fail_with_undefined_error()
        return iter(())


def _limited_range(*args: int) -> range:
    numbers = range(*args)
    if len(numbers) > MAX_RANGE:
        raise SecurityError(f"a range holds at most {MAX_RANGE} numbers")
    return numbers


class _MailSandbox(SandboxedEnvironment):
    intercepted_binops = frozenset({"*", "**"})

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        if operator == "**" and isinstance(right, int) and abs(right) > 64:
            raise SecurityError("a power is at most 64")
        if operator == "*":
            for sized, times in ((left, right), (right, left)):
                repeated = isinstance(sized, str | list | tuple) and isinstance(times, int)
                if repeated and len(sized) * times > MAX_OUTPUT_CHARS:
                    raise SecurityError("a repeated value is too long")
        return super().call_binop(context, operator, left, right)

    def is_safe_attribute(self, obj: Any, attr: str, value: Any) -> bool:
        return not attr.startswith("_") and super().is_safe_attribute(obj, attr, value)


def _environment(autoescape: bool) -> _MailSandbox:
    environment = _MailSandbox(
        autoescape=autoescape,
        undefined=_StrictAboutInternals,
        keep_trailing_newline=True,
        auto_reload=False,
    )
    environment.globals = {"range": _limited_range}
    return environment


_TEXT = _environment(autoescape=False)
_HTML = _environment(autoescape=True)


def _refuse_internals(tree: nodes.Template) -> None:
    """Names starting with `_` are refused before anything runs: Python's internals."""
    for node in tree.find_all((nodes.Getattr, nodes.Getitem, nodes.Name)):
        name: object
        if isinstance(node, nodes.Getattr):
            name = node.attr
        elif isinstance(node, nodes.Name):
            name = node.name
        else:
            key = node.arg if isinstance(node, nodes.Getitem) else None
            name = key.value if isinstance(key, nodes.Const) else None
        if isinstance(name, str) and name.startswith("_"):
            raise MailTemplateError(
                f"line {node.lineno}: {name!r} is not available in a template "
                "(names starting with _ are refused)"
            )


def _loop_depth(node: nodes.Node, depth: int = 0) -> int:
    here = depth + int(isinstance(node, nodes.For))
    return max([here, *(_loop_depth(child, here) for child in node.iter_child_nodes())])


def _compiled(source: str, autoescape: bool) -> Any:
    if len(source) > MAX_TEMPLATE_CHARS:
        raise MailTemplateError(f"a template is at most {MAX_TEMPLATE_CHARS} characters")
    environment = _HTML if autoescape else _TEXT
    try:
        tree = environment.parse(source)
    except TemplateError as error:
        line = getattr(error, "lineno", None)
        where = f"line {line}: " if line else ""
        raise MailTemplateError(f"{where}{error.message or 'not a template'}") from None
    _refuse_internals(tree)
    if _loop_depth(tree) > MAX_LOOP_DEPTH:
        raise MailTemplateError(f"loops nest at most {MAX_LOOP_DEPTH} deep")
    return environment.from_string(tree)


def render(source: str, context: Mapping[str, object], *, autoescape: bool) -> str:
    """The template rendered; MailTemplateError for anything wrong with it."""
    template = _compiled(source, autoescape)
    made: list[str] = []
    size = 0
    try:
        for chunk in template.generate(dict(context)):
            size += len(chunk)
            if size > MAX_OUTPUT_CHARS:
                raise MailTemplateError(f"a mail is at most {MAX_OUTPUT_CHARS} characters")
            made.append(chunk)
    except SecurityError as error:
        raise MailTemplateError(f"refused by the sandbox: {error}") from None
    except TemplateError as error:
        raise MailTemplateError(error.message or type(error).__name__) from None
    except (ArithmeticError, TypeError, ValueError, LookupError, AttributeError) as error:
        if isinstance(error, MailTemplateError):
            raise
        raise MailTemplateError(f"fails when rendered ({type(error).__name__}: {error})") from None
    return "".join(made)


def is_html(name: str) -> bool:
    return name.endswith("_html")


def check(name: str, source: str, context: Mapping[str, object]) -> None:
    """Compiles the template and renders it once with `context` (a sample), so that a
    template that would fail at send time is refused when saved."""
    render(source, context, autoescape=is_html(name))


def text_as_html(text: str) -> str:
    """A plain-text body as the HTML part, when the owner wrote only the text."""
    return (
        '<!DOCTYPE html><html><head><meta charset="utf-8"></head><body>'
        f'<div style="white-space:pre-wrap">{html.escape(text)}</div>'
        "</body></html>\n"
    )
