"""A filled honeypot's write, on every store: one more to its form's count of the day,
its key alone when it has one, after the same form check as a commit; never a
submission, an outbox row or a quota count."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from attrs import evolve

from intake.domain.errors import ErrorCode
from intake.domain.idempotency import RETENTION
from intake.domain.model import FormMode
from intake.ports.store import Store
from intake.ports.submissions import (
    Committed,
    FormCheck,
    FormRefused,
    HoneypotHit,
    IdempotencyTaken,
)
from tests.contract.builders import (
    FORM_ID,
    PERIOD,
    WORKSPACE_ID,
    form,
    plan,
    quota,
    record,
    seed,
    stored,
    submission,
)

# Of the pipeline's ports: the in-memory pipeline is held to the SQL stores here too.
PIPELINE_PORTS = True

pytestmark = pytest.mark.anyio

DAY = "2026-01-15"
OPEN_FORM = evolve(form(), enabled=True, mode=FormMode.PUBLIC)
CHECK = FormCheck(FORM_ID, OPEN_FORM.public_form_key)


def hit(day: str = DAY, *, key: str | None = None, n: int = 1) -> HoneypotHit:
    return HoneypotHit(
        form_id=FORM_ID,
        day=day,
        idempotency=None if key is None else record(submission(n), key=key),
        check=CHECK,
    )


async def _nothing_kept(store: Store) -> None:
    assert await stored(store) == []
    assert await store.submissions.outbox() == []
    assert await store.workspaces.usage(WORKSPACE_ID, PERIOD) == 0


async def test_a_hit_is_counted_by_form_and_day_and_nothing_else_is_written(
    store: Store,
) -> None:
    await seed(store, OPEN_FORM)

    results = [
        await store.submissions.record_honeypot(hit()),
        await store.submissions.record_honeypot(hit()),
        await store.submissions.record_honeypot(hit("2026-01-16")),
    ]

    assert results == [Committed()] * 3
    assert await store.submissions.honeypot_hits(FORM_ID) == {DAY: 2, "2026-01-16": 1}
    assert await store.submissions.honeypot_hits("frm_other") == {}
    await _nothing_kept(store)


async def test_a_hit_with_a_key_holds_it_as_a_commit_would(store: Store) -> None:
    await seed(store, OPEN_FORM)
    first = hit(key="k-1", n=1)

    assert await store.submissions.record_honeypot(first) == Committed()
    again = await store.submissions.record_honeypot(hit(key="k-1", n=2))
    real = submission(3)
    taken = await store.submissions.commit(plan(real, idempotency=record(real, key="k-1")))

    assert first.idempotency is not None
    assert again == IdempotencyTaken(first.idempotency)
    assert taken == IdempotencyTaken(first.idempotency)
    found = await store.submissions.find_idempotency(
        first.idempotency.scope, "k-1", first.idempotency.created_at - RETENTION
    )
    assert found == first.idempotency
    # The retry is answered by the key, as a real one's: it is not counted again.
    assert await store.submissions.honeypot_hits(FORM_ID) == {DAY: 1}
    await _nothing_kept(store)


async def test_a_key_held_by_a_real_submission_is_the_answer_and_nothing_is_counted(
    store: Store,
) -> None:
    await seed(store, OPEN_FORM)
    real = submission(1)
    await store.submissions.commit(plan(real, idempotency=record(real, key="k-1"), charge=quota(9)))

    result = await store.submissions.record_honeypot(hit(key="k-1", n=2))

    assert result == IdempotencyTaken(record(real, key="k-1"))
    assert await store.submissions.honeypot_hits(FORM_ID) == {}


@pytest.mark.parametrize(
    ("changes", "code"),
    [
        ({"enabled": False}, ErrorCode.FORM_DISABLED),
        ({"mode": FormMode.PROTECTED}, ErrorCode.UNAUTHORIZED),
        ({"public_form_key": "pk0rotated"}, ErrorCode.FORM_NOT_FOUND),
    ],
)
async def test_a_hit_on_a_changed_form_is_refused_as_a_commit_is_and_writes_nothing(
    store: Store, changes: dict[str, Any], code: ErrorCode
) -> None:
    await seed(store, evolve(OPEN_FORM, **changes))

    result = await store.submissions.record_honeypot(hit(key="k-1"))

    assert result == FormRefused(code)
    assert await store.submissions.honeypot_hits(FORM_ID) == {}
    since = record(submission(1)).created_at - RETENTION
    assert await store.submissions.find_idempotency(f"public:{FORM_ID}", "k-1", since) is None


async def test_concurrent_hits_are_all_counted(store: Store) -> None:
    await seed(store, OPEN_FORM)

    results = await asyncio.gather(*(store.submissions.record_honeypot(hit()) for _ in range(20)))

    assert results == [Committed()] * 20
    assert await store.submissions.honeypot_hits(FORM_ID) == {DAY: 20}
