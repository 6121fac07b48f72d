"""In-memory fakes of every port. They are part of the product: library users and
tests run the whole pipeline on them, and the contract suites hold them to the same
behaviour as the real adapters."""

from intake.adapters.memory.challenge import FakeChallengeVerifier
from intake.adapters.memory.clock import FakeClock, SeededIdSource
from intake.adapters.memory.senders import FakeMailer, FakeWebhookSender
from intake.adapters.memory.store import InMemoryStore

__all__ = [
    "FakeChallengeVerifier",
    "FakeClock",
    "FakeMailer",
    "FakeWebhookSender",
    "InMemoryStore",
    "SeededIdSource",
]
