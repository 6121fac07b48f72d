"""An outside service's opinion on spam (Akismet), beside the built-in filter: asked at
intake within a short timeout, and told what owners decided (docs/scoring.md,
"Akismet")."""

from __future__ import annotations

from typing import Protocol

from intake.domain.spam.model import Label
from intake.domain.spam.opinion import OpinionQuery

# Where Akismet answers, and how long a submission waits for its verdict: defaults of
# the settings, kept apart from the adapter so that reading them loads no client.
DEFAULT_AKISMET_API_URL = "https://rest.akismet.com"
DEFAULT_CHECK_TIMEOUT = 0.5
# A report is sent by the relay, where nobody waits on it: a slow answer may take longer.
REPORT_TIMEOUT = 10.0


class OpinionUnavailableError(Exception):
    """A report the service did not take (down, slow, refused, a key it does not know):
    the relay tries again later. The message is short and safe to log: never a key nor
    anything submitted."""


class SpamOpinion(Protocol):
    async def check(self, query: OpinionQuery) -> Label | None:
        """The service's verdict, or None when it gave none within its timeout (slow,
        down, an error, a key it refused): the built-in filter then decides alone.
        Never raises for the service's failures."""
        ...

    async def report(self, label: Label, query: OpinionQuery) -> None:
        """Tells the service what an owner decided (SPAM: submit-spam, HAM: submit-ham).
        Raises OpinionUnavailableError unless the service acknowledged it."""
        ...
