"""TemplateRenderer: renders an owner's mail template (domain/mail_templates.py) in a
sandbox whose time and memory are bounded, whatever the template does. It blocks its
caller, never longer than its own time limit; the service calls it off the event loop."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol


class TemplateRenderer(Protocol):
    def render(self, source: str, context: Mapping[str, object], *, autoescape: bool) -> str:
        """The rendered text; MailTemplateError for a template that does not compile,
        reaches outside the sandbox, or passes a limit of size, time or memory."""
        ...
