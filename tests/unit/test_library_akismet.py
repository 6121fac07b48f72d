"""The library with a spam opinion of its own (`Intake.open(spam_opinion=...)`): asked
about a public submission with a user agent, and told of triage by the library's relay."""

from __future__ import annotations

import pytest

from intake.config import Settings
from intake.domain.model import SubmissionStatus
from intake.domain.spam.model import Label
from intake.domain.spam.opinion import OpinionQuery
from intake.entrypoints.library import Intake

pytestmark = pytest.mark.anyio

SETTINGS = Settings.from_env({"INTAKE_DATABASE_URL": "sqlite:///:memory:"})


class Scripted:
    """A SpamOpinion that says spam of every message holding "casino"."""

    def __init__(self) -> None:
        self.asked: list[OpinionQuery] = []
        self.told: list[tuple[Label, OpinionQuery]] = []

    async def check(self, query: OpinionQuery) -> Label | None:
        self.asked.append(query)
        return Label.SPAM if "casino" in query.content else Label.HAM

    async def report(self, label: Label, query: OpinionQuery) -> None:
        self.told.append((label, query))


async def test_a_library_users_opinion_is_asked_and_told() -> None:
    opinion = Scripted()
    async with Intake.open(SETTINGS, spam_opinion=opinion) as intake:
        workspace = await intake.services.workspaces.create("Acme")
        form = await intake.services.forms.create(workspace.workspace_id)
        key = form.public_form_key
        visitor = {"client_ip": "203.0.113.9", "user_agent": "Mozilla/5.0"}
        spam = await intake.submit(key, {"message": "casino bonus"}, **visitor)
        ham = await intake.submit(key, {"message": "hello"}, **visitor)
        unasked = await intake.submit(key, {"message": "casino"})  # no user agent
        assert spam.submission_id is not None
        assert ham.ok
        assert unasked.submission_id is not None

        flagged = await intake.services.submissions.get(spam.submission_id)
        assert flagged.status is SubmissionStatus.SPAM
        await intake.services.triage.release(flagged)
        await intake.services.triage.mark_spam(
            await intake.services.submissions.get(unasked.submission_id)
        )
        await intake.runtime.relay.run_once()

    assert [q.user_agent for q in opinion.asked] == ["Mozilla/5.0", "Mozilla/5.0"]
    [(label, told)] = opinion.told
    assert label is Label.HAM
    assert told.content == "casino bonus"
