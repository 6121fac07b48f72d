"""A form's submissions counted by status in every store: the inbox's tab counts. Each
status counted under the same dates and search as the listing, up to a limit, and no
other form's."""

from __future__ import annotations

from datetime import timedelta

import pytest

from intake.domain.listing import SubmissionFilter
from intake.domain.model import Submission, SubmissionStatus
from intake.ports.store import Store
from tests.contract.builders import T0, form, plan, seed, submission

pytestmark = pytest.mark.anyio

ACCEPTED, SPAM, UNVERIFIED = (
    SubmissionStatus.ACCEPTED,
    SubmissionStatus.SPAM,
    SubmissionStatus.UNVERIFIED,
)
STATUSES = [ACCEPTED, SPAM, ACCEPTED, UNVERIFIED, ACCEPTED, SPAM, ACCEPTED]


async def commit(store: Store, *subs: Submission) -> list[Submission]:
    for sub in subs:
        assert type(await store.submissions.commit(plan(sub))).__name__ == "Committed"
    return list(subs)


async def test_each_status_is_counted_for_its_form_alone(store: Store) -> None:
    await seed(store, form(), form("frm_2", public_form_key="pk2"))
    await commit(store, *(submission(n, status=s) for n, s in enumerate(STATUSES)))
    await commit(store, submission(20, form_id="frm_2", status=SPAM))

    counts = await store.submissions.status_counts("frm_1", SubmissionFilter(), 100)
    nothing = await store.submissions.status_counts("frm_missing", SubmissionFilter(), 100)

    assert counts == {ACCEPTED: 4, SPAM: 2, UNVERIFIED: 1}
    assert nothing == {ACCEPTED: 0, SPAM: 0, UNVERIFIED: 0}


async def test_a_count_stops_at_the_limit(store: Store) -> None:
    await seed(store)
    await commit(store, *(submission(n, status=s) for n, s in enumerate(STATUSES)))

    counts = await store.submissions.status_counts("frm_1", SubmissionFilter(), 2)

    assert counts == {ACCEPTED: 2, SPAM: 2, UNVERIFIED: 1}
    with pytest.raises(ValueError, match="at least 1"):
        await store.submissions.status_counts("frm_1", SubmissionFilter(), 0)


async def test_dates_and_search_count_as_they_list_whatever_the_status(store: Store) -> None:
    await seed(store)
    subs = await commit(
        store,
        *(
            submission(
                n,
                status=s,
                created_at=T0 + timedelta(minutes=n),
                data={"m": "Needle" if n % 2 == 0 else "hay"},
            )
            for n, s in enumerate(STATUSES)
        ),
    )
    chosen = SubmissionFilter(
        frozenset({SPAM}), since=T0 + timedelta(minutes=1), until=T0 + timedelta(minutes=6)
    )
    searched = SubmissionFilter(text="needle")

    in_dates = await store.submissions.status_counts("frm_1", chosen, 100)
    found = await store.submissions.status_counts("frm_1", searched, 100)

    assert in_dates == {ACCEPTED: 2, SPAM: 2, UNVERIFIED: 1}  # minutes 1 to 5
    for status in SubmissionStatus:
        expected = [s for s in subs if s.status is status and searched.matches(s)]
        assert found[status] == len(expected)
    assert found == {ACCEPTED: 4, SPAM: 0, UNVERIFIED: 0}
