"""Owners' mail templates: what the domain knows of them. A template is Jinja2 text,
rendered in a sandbox by the TemplateRenderer port (ports/templates.py; its adapter is
adapters/templates/), checked when saved and when previewed; these are its limits, and
the one error every way of failing gives.

A template sees only the values it is given (owner_mail.py). It cannot reach Python's
internals, nor make a value, nor spend time, past the limits below and the sandbox's
own (docs/api.md lists them all): a failure is a MailTemplateError, refused by name
when saved and replaced by the default when sent.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Protocol

# A template's own size, and what rendering one may make.
MAX_TEMPLATE_CHARS = 20_000
MAX_OUTPUT_CHARS = 100_000
MAX_RANGE = 1_000
MAX_LOOP_DEPTH = 2


class MailTemplateError(ValueError):
    """A template that does not compile, reaches outside the sandbox or runs away; the
    message says where and why, in words an owner can act on."""


class RenderTemplate(Protocol):
    """Renders one template with `context`; MailTemplateError for anything wrong with
    it. The HTML part is rendered with autoescaping, the text part and subject without."""

    def __call__(self, source: str, context: Mapping[str, object], *, autoescape: bool) -> str:
        """The rendered text."""
        ...


def no_template_renderer(source: str, context: Mapping[str, object], *, autoescape: bool) -> str:
    """What renders where no TemplateRenderer was given: nothing, so that each template
    is refused when saved and replaced by its default when sent."""
    raise MailTemplateError("templates are not rendered here: no template renderer is set")


def is_html(name: str) -> bool:
    return name.endswith("_html")


def text_as_html(text: str) -> str:
    """A plain-text body as the HTML part, when the owner wrote only the text."""
    return (
        '<!DOCTYPE html><html><head><meta charset="utf-8"></head><body>'
        f'<div style="white-space:pre-wrap">{html.escape(text)}</div>'
        "</body></html>\n"
    )
