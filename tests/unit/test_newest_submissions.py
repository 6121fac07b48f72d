"""`Admin.newest_submissions`, what `intake submissions list` prints: a form's
submissions newest first, as the management API pages them, read a page at a time
whatever the page's size."""

from __future__ import annotations

import pytest

from intake.config import Settings
from intake.domain.listing import SubmissionFilter
from intake.domain.model import SubmissionStatus
from intake.entrypoints.library import Intake

pytestmark = pytest.mark.anyio

SETTINGS = Settings.from_env({"INTAKE_DATABASE_URL": "sqlite:///:memory:"})


async def _made(intake: Intake, count: int) -> tuple[str, list[str]]:
    """A form with `count` accepted submissions; their ids, newest first: highest first,
    as ids sort by time (two made in one millisecond sort by their random part)."""
    workspace = await intake.services.workspaces.create("Acme")
    form = await intake.services.forms.create(workspace.workspace_id)
    ids = []
    for number in range(count):
        # One client address each: the rate limit is not what this is about.
        result = await intake.submit(
            form.public_form_key, {"n": str(number)}, client_ip=f"192.0.2.{number + 1}"
        )
        assert result.submission_id is not None
        ids.append(result.submission_id)
    return form.form_id, sorted(ids, reverse=True)


@pytest.mark.parametrize("page_size", [1, 2, 3, 200])
async def test_every_submission_comes_once_newest_first_across_pages(page_size: int) -> None:
    async with Intake.open(SETTINGS) as intake:
        form_id, ids = await _made(intake, 5)

        listed = intake.services.exports.newest(form_id, page_size=page_size)

        assert [s.submission_id async for s in listed] == ids


@pytest.mark.parametrize(("limit", "page_size"), [(1, 2), (3, 2), (4, 2), (5, 2), (9, 2), (3, 200)])
async def test_a_limit_keeps_the_newest_that_many(limit: int, page_size: int) -> None:
    async with Intake.open(SETTINGS) as intake:
        form_id, ids = await _made(intake, 5)

        listed = intake.services.exports.newest(form_id, limit=limit, page_size=page_size)

        assert [s.submission_id async for s in listed] == ids[:limit]


async def test_the_filter_applies_to_every_page() -> None:
    async with Intake.open(SETTINGS) as intake:
        form_id, _ = await _made(intake, 4)
        spam = SubmissionFilter(frozenset({SubmissionStatus.SPAM}))

        listed = intake.services.exports.newest(form_id, spam, page_size=1)

        assert [s async for s in listed] == []
