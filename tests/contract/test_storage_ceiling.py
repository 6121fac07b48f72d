"""A workspace's storage ceiling: the commit counts a submission's files against every
file its workspace keeps, whatever the status, and refuses one that would pass the
ceiling (StorageFull) without writing anything (docs/uploads.md, "Storage ceiling and
spam retention")."""

from __future__ import annotations

import asyncio

import pytest
from attrs import evolve

from intake.domain.idempotency import IdempotencyRecord
from intake.domain.model import Submission, SubmissionStatus
from intake.ports.store import Store
from intake.ports.submissions import (
    CommitPlan,
    Committed,
    IdempotencyTaken,
    QuotaCharge,
    QuotaReached,
    StorageFull,
)
from tests.contract.builders import (
    PERIOD,
    WORKSPACE_ID,
    form,
    plan,
    quota,
    record,
    seed,
    stored,
    submission,
    workspace,
)

# Of the pipeline's ports: the in-memory pipeline is held to the SQL stores here too.
PIPELINE_PORTS = True

pytestmark = pytest.mark.anyio


def size(sub: Submission) -> int:
    return sum(f.size for f in sub.files)


def capped(
    sub: Submission,
    limit: int | None,
    *,
    idempotency: IdempotencyRecord | None = None,
    charge: QuotaCharge | None = None,
) -> CommitPlan:
    return evolve(plan(sub, idempotency=idempotency, charge=charge), storage_limit=limit)


@pytest.mark.parametrize(
    "status", [SubmissionStatus.ACCEPTED, SubmissionStatus.SPAM, SubmissionStatus.UNVERIFIED]
)
async def test_the_files_of_every_status_count(store: Store, status: SubmissionStatus) -> None:
    await seed(store)
    one = submission(1, files=2, status=status)
    two = submission(2, files=1, status=status)

    for sub in (one, two, submission(3, status=status)):
        assert await store.submissions.commit(capped(sub, None)) == Committed()

    assert await store.workspaces.storage_used(WORKSPACE_ID) == size(one) + size(two)


async def test_a_workspace_with_nothing_stored_uses_nothing(store: Store) -> None:
    await seed(store)
    assert await store.workspaces.storage_used(WORKSPACE_ID) == 0
    assert await store.workspaces.storage_used("ws_unknown") == 0


@pytest.mark.parametrize(
    "status", [SubmissionStatus.ACCEPTED, SubmissionStatus.SPAM, SubmissionStatus.UNVERIFIED]
)
async def test_files_past_the_ceiling_are_refused_whatever_the_status(
    store: Store, status: SubmissionStatus
) -> None:
    await seed(store)
    first = submission(1, files=1, status=SubmissionStatus.SPAM)
    over = submission(2, files=1, status=status)
    limit = size(first) + size(over) - 1
    assert await store.submissions.commit(capped(first, limit)) == Committed()
    events = await store.submissions.outbox()

    result = await store.submissions.commit(capped(over, limit, charge=quota(10)))

    assert result == StorageFull()
    assert await store.submissions.get(over.submission_id) is None
    assert await store.submissions.outbox() == events
    # The month's count taken before the files were weighed is given back.
    assert await store.workspaces.usage(WORKSPACE_ID, PERIOD) == 0
    assert await store.workspaces.storage_used(WORKSPACE_ID) == size(first)


async def test_files_that_reach_the_ceiling_exactly_are_kept(store: Store) -> None:
    await seed(store)
    first, second = submission(1, files=2), submission(2, files=1)
    limit = size(first) + size(second)

    assert await store.submissions.commit(capped(first, limit)) == Committed()
    assert await store.submissions.commit(capped(second, limit)) == Committed()

    assert await store.workspaces.storage_used(WORKSPACE_ID) == limit
    assert await stored(store) == [first, second]


async def test_one_submission_larger_than_the_ceiling_is_refused(store: Store) -> None:
    await seed(store)
    big = submission(1, files=3)

    assert await store.submissions.commit(capped(big, size(big) - 1)) == StorageFull()

    assert await stored(store) == []
    assert await store.workspaces.storage_used(WORKSPACE_ID) == 0


async def test_a_submission_without_files_passes_a_full_workspace(store: Store) -> None:
    await seed(store)
    full = submission(1, files=1)
    assert await store.submissions.commit(capped(full, size(full))) == Committed()

    assert await store.submissions.commit(capped(submission(2), size(full))) == Committed()
    assert await store.submissions.commit(capped(submission(3), 0)) == Committed()

    assert len(await stored(store)) == 3


async def test_the_ceiling_is_per_workspace(store: Store) -> None:
    other = evolve(form("frm_2", "ws_2", "pk0form2"))
    await seed(store, form(), other)
    mine = submission(1, files=1)
    theirs = submission(2, files=1, form_id="frm_2", workspace_id="ws_2")

    assert await store.submissions.commit(capped(mine, size(mine))) == Committed()
    assert await store.submissions.commit(capped(theirs, size(theirs))) == Committed()

    assert await store.workspaces.storage_used(WORKSPACE_ID) == size(mine)
    assert await store.workspaces.storage_used("ws_2") == size(theirs)


async def test_a_quota_refusal_counts_no_bytes(store: Store) -> None:
    await seed(store)
    await store.submissions.commit(capped(submission(1), None, charge=quota(1)))

    result = await store.submissions.commit(capped(submission(2, files=1), None, charge=quota(1)))

    assert result == QuotaReached()
    assert await store.workspaces.storage_used(WORKSPACE_ID) == 0


async def test_a_commit_that_lost_its_key_counts_no_bytes(store: Store) -> None:
    await seed(store)
    first = submission(1, files=1)
    second = submission(2, files=2)
    await store.submissions.commit(capped(first, None, idempotency=record(first)))

    result = await store.submissions.commit(
        capped(second, size(first) + size(second), idempotency=record(second))
    )

    assert result == IdempotencyTaken(record(first))
    assert await store.workspaces.storage_used(WORKSPACE_ID) == size(first)


async def test_concurrent_commits_never_pass_the_ceiling(store: Store) -> None:
    await seed(store)
    subs = [submission(n, files=1) for n in range(1, 11)]
    each = size(subs[0])  # one file of the same size each
    assert all(size(sub) == each for sub in subs)
    limit = 4 * each + each // 2

    results = await asyncio.gather(
        *(store.submissions.commit(capped(sub, limit, charge=quota(100))) for sub in subs)
    )

    assert sorted(type(r).__name__ for r in results) == ["Committed"] * 4 + ["StorageFull"] * 6
    assert await store.workspaces.storage_used(WORKSPACE_ID) == 4 * each
    assert await store.workspaces.usage(WORKSPACE_ID, PERIOD) == 4
    assert len(await stored(store)) == 4


async def test_the_workspace_reads_back_unchanged(store: Store) -> None:
    # The count lives beside the workspace, not in it.
    await seed(store)
    await store.submissions.commit(capped(submission(1, files=1), None))

    assert await store.workspaces.get(WORKSPACE_ID) == workspace()


# A workspace's own ceiling, over INTAKE_WORKSPACE_STORAGE_LIMIT


async def test_a_workspace_keeps_its_own_storage_limit(store: Store) -> None:
    own = evolve(workspace(), storage_limit=5_000_000_000)
    await store.workspaces.add(own)
    await store.forms.add(evolve(form(), enabled=True))

    assert await store.workspaces.get(WORKSPACE_ID) == own
    assert await store.workspaces.list() == [own]
    context = await store.forms.resolve_id(form().form_id)
    assert context is not None
    assert context.workspace == own

    await store.workspaces.update(evolve(own, storage_limit=None))

    assert await store.workspaces.get(WORKSPACE_ID) == workspace()
    context = await store.forms.resolve_id(form().form_id)
    assert context is not None
    assert context.workspace.storage_limit is None
