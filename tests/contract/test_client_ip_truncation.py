"""Full client addresses past their hours, in every store: `truncate_client_ips` cuts the
address of each submission created up to the cutoff to its /24 or /48 network, leaves a
younger one whole and a network, an absent address or text that is no address as they
are; it goes on from where the last call stopped, batch by batch, and two sweeps at
once cut each address once."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta

import pytest
from attrs import evolve

from intake.domain.model import Submission
from intake.ports.store import Store
from intake.ports.submissions import TruncatedBatch
from intake.service.retention import truncate_client_ips
from tests.contract.builders import T0, plan, seed, stored, submission

pytestmark = pytest.mark.anyio

CUTOFF = T0 + timedelta(days=1)
MICROSECOND = timedelta(microseconds=1)


def aged(n: int, client_ip: str | None, created_at: datetime | None = None) -> Submission:
    """The n-th submission (ids grow with n, as their times do), with `client_ip`."""
    at = CUTOFF - timedelta(hours=10 - n) if created_at is None else created_at
    return evolve(submission(n, created_at=at), client_ip=client_ip)


async def commit(store: Store, *subs: Submission) -> None:
    await seed(store)
    for sub in subs:
        assert type(await store.submissions.commit(plan(sub))).__name__ == "Committed"


async def addresses(store: Store) -> dict[str, str | None]:
    return {s.submission_id: s.client_ip for s in await stored(store)}


async def test_full_addresses_up_to_the_cutoff_become_their_networks(store: Store) -> None:
    subs = [
        aged(1, "203.0.113.77"),
        aged(2, "2001:db8:abcd:12::1"),
        aged(3, "::ffff:198.51.100.9"),  # IPv4 written in IPv6: its IPv4 network
        aged(4, "192.0.2.0"),  # stored truncated already
        aged(5, None),  # stored as `none`
        aged(6, "unknown"),  # no address: nothing to cut
        aged(7, "198.51.100.200", created_at=CUTOFF),
        aged(8, "192.0.2.55", created_at=CUTOFF + MICROSECOND),  # younger: kept whole
    ]
    await commit(store, *subs)

    batch = await store.submissions.truncate_client_ips(CUTOFF, 100)

    assert batch == TruncatedBatch(seen=7, truncated=4)
    assert list((await addresses(store)).values()) == [
        "203.0.113.0",
        "2001:db8:abcd::",
        "198.51.100.0",
        "192.0.2.0",
        None,
        "unknown",
        "198.51.100.0",
        "192.0.2.55",
    ]


async def test_a_sweep_goes_on_from_where_the_last_one_stopped(store: Store) -> None:
    first, second = aged(1, "203.0.113.7"), aged(2, "203.0.113.8", created_at=CUTOFF)
    later = aged(3, "203.0.113.9", created_at=CUTOFF + timedelta(hours=1))
    await commit(store, first, second, later)

    assert await store.submissions.truncate_client_ips(CUTOFF, 10) == TruncatedBatch(2, 2)
    assert await store.submissions.truncate_client_ips(CUTOFF, 10) == TruncatedBatch(0, 0)
    next_hour = CUTOFF + timedelta(hours=1)
    assert await store.submissions.truncate_client_ips(next_hour, 10) == TruncatedBatch(1, 1)
    assert list((await addresses(store)).values()) == ["203.0.113.0"] * 3


async def test_the_sweep_stops_at_the_first_younger_submission(store: Store) -> None:
    # Ids sort by time: one younger than the cutoff means those after it are too, so the
    # sweep waits there; an older one behind it (a clock set back) is cut by a later one.
    young = aged(1, "203.0.113.7", created_at=CUTOFF + timedelta(hours=1))
    behind = aged(2, "203.0.113.8")
    await commit(store, young, behind)

    assert await store.submissions.truncate_client_ips(CUTOFF, 10) == TruncatedBatch(0, 0)
    later = CUTOFF + timedelta(hours=2)
    assert await store.submissions.truncate_client_ips(later, 10) == TruncatedBatch(2, 2)


async def test_the_service_sweeps_in_batches_until_none_is_left(store: Store) -> None:
    subs = [aged(n, f"203.0.113.{n}") for n in range(1, 8)]
    await commit(store, *subs, aged(9, "192.0.2.9", created_at=CUTOFF + timedelta(hours=5)))
    now = CUTOFF + timedelta(hours=24)

    assert await truncate_client_ips(store.submissions, now, timedelta(hours=24), batch_size=2) == 7

    assert set((await addresses(store)).values()) == {"192.0.2.9", "203.0.113.0"}


async def test_two_sweeps_at_once_cut_each_address_once(store: Store) -> None:
    await commit(store, *(aged(n, f"198.51.100.{n}") for n in range(1, 10)))

    async def sweep() -> int:
        total = 0
        while (batch := await store.submissions.truncate_client_ips(CUTOFF, 2)).seen == 2:
            total += batch.truncated
        return total + batch.truncated

    assert sum(await asyncio.gather(sweep(), sweep())) == 9
    assert set((await addresses(store)).values()) == {"198.51.100.0"}


async def test_a_limit_below_one_is_refused(store: Store) -> None:
    with pytest.raises(ValueError, match="limit"):
        await store.submissions.truncate_client_ips(CUTOFF, 0)
