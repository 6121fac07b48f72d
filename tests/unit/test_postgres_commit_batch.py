"""How PostgreSQL's group commit splits and orders a batch, and how each commit of it
counts its quota (adapters/postgres/commit_batch.py); the database's side is in
tests/contract/test_postgres_commit_batches.py."""

from __future__ import annotations

from intake.adapters.postgres.commit_batch import (
    PER_WORKSPACE,
    RESERVE,
    SHARDS,
    chunks,
    counted,
    plain,
)
from intake.adapters.sql_rows import Params


def _params(
    n: int, workspace_id: str = "ws_1", key: str | None = None, ceiling: int | None = 10**6
) -> Params:
    return {
        "submission_id": f"sub_{n}",
        "workspace_id": workspace_id,
        "quota_workspace_id": None if ceiling is None else workspace_id,
        "quota_period": None if ceiling is None else "2026-01",
        "quota_ceiling": ceiling,
        "quota_exact": False,
        "idem_scope": None if key is None else "public:frm_1",
        "idem_key": key,
        "storage_bytes": 0,
    }


def test_a_batch_goes_in_one_transaction_in_the_order_of_workspace_then_key() -> None:
    batch = [
        _params(0, "ws_b", "k2"),
        _params(1, "ws_a", "k9"),
        _params(2, "ws_b", "k1"),
        _params(3, "ws_a"),
        _params(4, "ws_b", "k1"),
    ]

    assert chunks(batch) == [[3, 1, 2, 4, 0]]


def test_one_workspace_month_counts_at_most_per_workspace_commits_in_a_transaction() -> None:
    batch = [_params(n) for n in range(PER_WORKSPACE * 2 + 1)]
    batch.append(_params(99, "ws_b"))

    split = chunks(batch)

    assert [len(chunk) for chunk in split] == [PER_WORKSPACE + 1, PER_WORKSPACE, 1]
    assert sorted(i for chunk in split for i in chunk) == list(range(len(batch)))


def test_a_submission_id_twice_goes_in_two_transactions() -> None:
    assert chunks([_params(1), _params(2), _params(1)]) == [[0, 1], [2]]


def test_far_from_the_ceiling_a_commit_counts_beside_others_under_a_lowered_ceiling() -> None:
    (item,) = counted([_params(1, ceiling=10_000)])

    assert item["quota_exact"] is False
    assert item["quota_ceiling"] == 10_000 - RESERVE


def test_near_the_ceiling_every_commit_of_that_month_counts_exactly() -> None:
    near = RESERVE + SHARDS - 1
    items = counted([_params(1, ceiling=10_000), _params(2, ceiling=near), _params(3, "ws_b")])

    assert [(i["quota_exact"], i["quota_ceiling"]) for i in items] == [
        (True, 10_000),
        (True, near),
        (False, 10**6 - RESERVE),
    ]


def test_a_commit_without_a_quota_is_sent_as_it_is() -> None:
    batch = [_params(1, ceiling=None)]

    assert counted(batch) == batch


def test_only_a_commit_without_a_key_a_file_or_an_exact_count_goes_set_based() -> None:
    exact = {**_params(3), "quota_exact": True}
    with_file = {**_params(4), "storage_bytes": 2048}

    assert plain(_params(1))
    assert plain(_params(2, ceiling=None))
    assert not plain(_params(5, key="key-1"))
    assert not plain(exact)
    assert not plain(with_file)
