"""In-memory doubles. They are part of the product: library users and tests run intake
on them. `InMemoryStore` is the SQLite store on a private database in memory;
`InMemoryPipelineStore` is the pipeline's ports alone, in Python, for property tests
that drive thousands of submissions; the contract suites hold it to the real stores."""

from intake.adapters.memory.challenge import FakeChallengeVerifier
from intake.adapters.memory.clock import FakeClock, SeededIdSource
from intake.adapters.memory.senders import FakeMailer, FakeWebhookSender
from intake.adapters.memory.store import InMemoryPipelineStore
from intake.adapters.sqlite.in_memory import InMemoryStore

__all__ = [
    "FakeChallengeVerifier",
    "FakeClock",
    "FakeMailer",
    "FakeWebhookSender",
    "InMemoryPipelineStore",
    "InMemoryStore",
    "SeededIdSource",
]
