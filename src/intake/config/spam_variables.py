"""The variables of the learning spam filter (docs/scoring.md). Declared as variables.py
declares the rest, whose table lists them in its order."""

from __future__ import annotations

from intake.config.variable import Variable, integer
from intake.service.spam_knowledge import DEFAULT_TOKEN_BUDGET
from intake.service.spam_settling import DEFAULT_SETTLE_DAYS

SPAM_CACHE_TOKENS = Variable(
    "INTAKE_SPAM_CACHE_TOKENS",
    DEFAULT_TOKEN_BUDGET,
    integer(minimum=1000),
    (
        "tokens of the learning filter's statistics a serving process keeps in memory, every "
        "workspace's and the instance's together, and the words it remembers having scored "
        "with them (about 100 bytes each); past it, or past one workspace held per 4 tokens "
        "(a workspace held costs about 400 bytes, even one that taught nothing), the least "
        "recently used workspaces are dropped and loaded again when next used "
        "([scoring.md](scoring.md#what-the-learning-filter-keeps))"
    ),
)
SPAM_SETTLE_DAYS = Variable(
    "INTAKE_SPAM_SETTLE_DAYS",
    DEFAULT_SETTLE_DAYS,
    integer(minimum=0),
    (
        "days after which an accepted submission nobody triaged teaches the spam filter ham, "
        "and a spam one spam (`intake purge` and `intake relay`; `0`: untouched submissions "
        "teach nothing); keep it below `INTAKE_SPAM_RETENTION_DAYS`, or spam is erased before "
        "it teaches ([scoring.md](scoring.md#submissions-nobody-touches))"
    ),
)
