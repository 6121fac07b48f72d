"""Owners' mail templates rendered: Jinja2 in its immutable sandbox, with every way of
making a value or spending time bounded.

A template sees only the values it is given (domain/owner_mail.py): text. It cannot reach
Python's internals (`''.__class__` and every other name starting with `_` are refused)
nor change a value it is given. Each operation it makes is counted against one render's
budget (budget.py): arithmetic (all of it: an integer past MAX_INT_BITS is refused, and a
power or product that would make one is refused before it is computed), `~`, every
filter, call, attribute, item and loop turn; a value that would pass MAX_VALUE_CHARS is
refused before it is built wherever its size can be known (sizes.py), after otherwise;
calls (macros, `caller`, a recursive loop's `loop`) nest MAX_CALL_DEPTH deep at most;
loops nest MAX_LOOP_DEPTH deep in the source; and rendering stops at MAX_OUTPUT_CHARS.
The worker process that runs this (worker.py) bounds its time and memory besides.

The HTML part is rendered with autoescaping, so a submitted value shows as text, never
markup; the plain-text part and the subject without it.
"""

from __future__ import annotations

import types
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from jinja2 import TemplateError, Undefined, nodes, pass_eval_context
from jinja2.compiler import CodeGenerator, Frame
from jinja2.exceptions import SecurityError
from jinja2.filters import FILTERS, do_join, make_attrgetter
from jinja2.nodes import EvalContext
from jinja2.runtime import markup_join, str_join
from jinja2.sandbox import ImmutableSandboxedEnvironment
from jinja2.utils import _PassArg

from intake.adapters.templates.budget import (
    MAX_CALL_DEPTH,
    MAX_INT_BITS,
    budget_for_one_render,
    counted,
    current,
    made,
    refuse_size,
)
from intake.adapters.templates.sizes import (
    BEFORE,
    format_size,
    joined,
    padded_method,
    printf_size,
)
from intake.domain.mail_templates import (
    MAX_LOOP_DEPTH,
    MAX_OUTPUT_CHARS,
    MAX_RANGE,
    MAX_TEMPLATE_CHARS,
    MailTemplateError,
)

# How much of an error's own words a refusal repeats.
_MAX_REASON_CHARS = 200
_LOOP_FILTER = "counted"


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
    current().tick()
    numbers = range(*args)
    if len(numbers) > MAX_RANGE:
        raise SecurityError(f"a range holds at most {MAX_RANGE} numbers")
    return numbers


class _BoundedCodeGenerator(CodeGenerator):
    """`a ~ b` made by the environment (bounded_concat), not by Jinja's own join."""

    def visit_Concat(self, node: nodes.Concat, frame: Frame) -> None:  # noqa: N802 - Jinja's
        volatile = frame.eval_ctx.volatile
        escape = "context.eval_ctx.autoescape" if volatile else repr(frame.eval_ctx.autoescape)
        self.write(f"environment.bounded_concat({escape}, (")
        for arg in node.nodes:
            self.visit(arg, frame)
            self.write(", ")
        self.write("))")


def _bits(number: int) -> int:
    return max(abs(number).bit_length(), 1)


def _before_binop(operator: str, left: Any, right: Any) -> None:
    """Refuses a power, product or sum whose result would be past the limits, before
    Python spends the time and memory to compute it."""
    ints = isinstance(left, int) and isinstance(right, int)
    if operator == "**" and ints and right > 0:
        refuse_bits = _bits(left) * right if abs(left) > 1 else 0
        if refuse_bits > MAX_INT_BITS:
            raise SecurityError(f"a number is at most {MAX_INT_BITS} bits")
    elif operator == "*" and ints:
        if _bits(left) + _bits(right) > MAX_INT_BITS:
            raise SecurityError(f"a number is at most {MAX_INT_BITS} bits")
    elif operator == "*":
        for sized, times in ((left, right), (right, left)):
            if isinstance(sized, str | bytes | list | tuple) and isinstance(times, int):
                refuse_size(len(sized) * times, "a repeated value")
    elif operator == "+" and isinstance(left, str | bytes | list | tuple):
        if isinstance(right, str | bytes | list | tuple):
            refuse_size(len(left) + len(right), "a joined value")
    elif operator == "%" and isinstance(left, str):
        refuse_size(printf_size(left, right), "a formatted value")


def _bounded_concat_parts(parts: Iterable[str]) -> str:
    """The environment's `concat`: what a block, a macro or `{% set %}` makes of its
    output, refused before it is joined when too long."""
    pieces = list(parts)
    refuse_size(sum(map(len, pieces)), "a block's output")
    return "".join(pieces)


class _MailSandbox(ImmutableSandboxedEnvironment):
    code_generator_class = _BoundedCodeGenerator
    intercepted_binops = frozenset({"+", "-", "*", "/", "//", "%", "**"})
    intercepted_unops = frozenset({"-", "+"})
    concat = staticmethod(_bounded_concat_parts)

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        current().tick()
        _before_binop(operator, left, right)
        return made(super().call_binop(context, operator, left, right))

    def call_unop(self, context: Any, operator: str, arg: Any) -> Any:
        return made(super().call_unop(context, operator, arg))

    def getattr(self, obj: Any, attribute: str) -> Any:
        current().tick()
        return super().getattr(obj, attribute)

    def getitem(self, obj: Any, argument: Any) -> Any:
        current().tick()
        return super().getitem(obj, argument)

    def is_safe_attribute(self, obj: Any, attr: str, value: Any) -> bool:
        return not attr.startswith("_") and super().is_safe_attribute(obj, attr, value)

    def bounded_concat(self, autoescape: bool, values: tuple[Any, ...]) -> Any:
        """`a ~ b ~ c`, refused before it is joined when too long."""
        current().tick()
        refuse_size(sum(len(str(value)) for value in values), "a joined value")
        return made(markup_join(values) if autoescape else str_join(values))

    def call(
        __self,  # noqa: N805 - Jinja's own spelling, so that no keyword argument clashes
        __context: Any,
        __obj: Any,
        *args: Any,
        **kwargs: Any,
    ) -> Any:
        budget = current()
        budget.tick()
        if isinstance(__obj, types.BuiltinMethodType | types.MethodWrapperType):
            owner = getattr(__obj, "__self__", None)
            # A bytes value's methods grow it as a text's do; latin-1 keeps its length.
            text = owner.decode("latin-1") if isinstance(owner, bytes) else owner
            args = padded_method(__obj.__name__, text if isinstance(text, str) else "", args)
        budget.depth += 1
        try:
            if budget.depth > MAX_CALL_DEPTH:
                raise SecurityError(
                    f"calls (macros, recursive loops) nest at most {MAX_CALL_DEPTH} deep"
                )
            sandboxed = ImmutableSandboxedEnvironment.call
            return made(sandboxed(__self, __context, __obj, *args, **kwargs))
        finally:
            budget.depth -= 1

    def wrap_str_format(self, value: Any) -> Any:
        """`'{}'.format(...)` and `format_map`, refused before formatting when the
        result would be too long."""
        sandboxed = super().wrap_str_format(value)
        if sandboxed is None:
            return None
        template: str = value.__self__
        by_map = value.__name__ == "format_map"

        def bounded(*args: Any, **kwargs: Any) -> Any:
            if by_map:
                given = args[0] if args and isinstance(args[0], Mapping) else {}
                refuse_size(format_size(template, (), given), "a formatted value")
            else:
                refuse_size(format_size(template, args, kwargs), "a formatted value")
            return made(sandboxed(*args, **kwargs))

        return bounded


def _bounded_filter(name: str, original: Any) -> Any:
    """`original`, counted, checked beforehand where sizes.py knows how, and its result
    counted (a lazy one item by item)."""
    check = BEFORE.get(name)
    passes_first = _PassArg.from_obj(original) is not None

    def bounded(*args: Any, **kwargs: Any) -> Any:
        current().tick()
        if check is not None:
            check(*(args[1:] if passes_first else args), **kwargs)
        return made(original(*args, **kwargs))

    bounded.__name__ = getattr(original, "__name__", name)
    bounded.__dict__.update(getattr(original, "__dict__", {}))  # Jinja's pass_* marks
    return bounded


@pass_eval_context
def _join(eval_ctx: EvalContext, value: Iterable[Any], d: str = "", attribute: Any = None) -> Any:
    pick = None if attribute is None else make_attrgetter(eval_ctx.environment, attribute)
    return do_join(eval_ctx, joined(value, d, pick), d)


def _environment(autoescape: bool) -> _MailSandbox:
    environment = _MailSandbox(
        autoescape=autoescape,
        undefined=_StrictAboutInternals,
        keep_trailing_newline=True,
        auto_reload=False,
        # Nothing is computed while compiling: every value is made, and counted, when
        # the template runs.
        optimized=False,
    )
    filters = {name: _bounded_filter(name, original) for name, original in FILTERS.items()}
    filters["join"] = _bounded_filter("join", _join)
    filters[_LOOP_FILTER] = counted
    environment.filters = filters
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


def _count_loop_turns(tree: nodes.Template) -> None:
    """Every loop's items read through the `counted` filter: each turn an operation."""
    for loop in tree.find_all(nodes.For):
        loop.iter = nodes.Filter(loop.iter, _LOOP_FILTER, [], [], None, None, lineno=loop.lineno)


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
    _count_loop_turns(tree)
    return environment.from_string(tree)


def _generated(source: str, context: Mapping[str, object], autoescape: bool) -> str:
    made_parts: list[str] = []
    size = 0
    with budget_for_one_render():
        for chunk in _compiled(source, autoescape).generate(dict(context)):
            size += len(chunk)
            if size > MAX_OUTPUT_CHARS:
                raise MailTemplateError(f"a mail is at most {MAX_OUTPUT_CHARS} characters")
            made_parts.append(chunk)
    return "".join(made_parts)


def render(source: str, context: Mapping[str, object], *, autoescape: bool) -> str:
    """The template rendered; MailTemplateError, saying why in words an owner can act on,
    for anything wrong with it, whatever the template does."""
    try:
        return _generated(source, context, autoescape)
    except MailTemplateError:
        raise
    except SecurityError as error:
        raise MailTemplateError(f"refused by the sandbox: {_reason(error)}") from None
    except TemplateError as error:
        raise MailTemplateError(_reason(error) or type(error).__name__) from None
    except RecursionError:
        raise MailTemplateError("nests too deep (a macro or loop calling itself?)") from None
    except MemoryError:
        raise MailTemplateError("needs too much memory") from None
    except Exception as error:  # whatever a template does wrong is its own failure
        raise MailTemplateError(
            f"fails when rendered ({type(error).__name__}: {_reason(error)})"
        ) from None


def _reason(error: Exception) -> str:
    text = getattr(error, "message", None) or str(error)
    return text if len(text) <= _MAX_REASON_CHARS else text[:_MAX_REASON_CHARS] + "..."
