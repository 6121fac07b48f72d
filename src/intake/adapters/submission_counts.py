"""The statement of a form's submissions counted by status under a filter
(`SubmissionRepository.status_counts`), once for both SQL stores.

One statement, a capped count a status: each reads at most `limit` entries of the
(form_id, status, submission_id) index (a search or dates read the rows they test), so a
form of a million submissions costs what one of `limit` does."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

from attrs import evolve

from intake.adapters.submission_pages import Search, filter_conditions
from intake.domain.listing import SubmissionFilter
from intake.domain.model import SubmissionStatus


def count_statement(
    form_id: str,
    chosen: SubmissionFilter,
    limit: int,
    time: Callable[[datetime], object],
    search: Search,
) -> tuple[str, list[object]]:
    """The statement, with `?` placeholders, and its parameters: one row, a column a
    status (named by its value), each at most `limit`."""
    if limit < 1:
        raise ValueError("a count's limit is at least 1")
    columns: list[str] = []
    params: list[object] = []
    for status in SubmissionStatus:
        one = evolve(chosen, statuses=frozenset({status}))
        conditions, condition_params = filter_conditions(form_id, one, time, search)
        columns.append(
            "(SELECT count(*) FROM (SELECT 1 FROM submissions"  # noqa: S608 - constants only
            f" WHERE {' AND '.join(conditions)} LIMIT ?) AS counted) AS {status.value}"
        )
        params.extend([*condition_params, limit])
    return f"SELECT {', '.join(columns)}", params


def counts_from_row(values: Sequence[object]) -> dict[SubmissionStatus, int]:
    """The statement's one row, its columns in SubmissionStatus's order."""
    return {
        status: value if isinstance(value, int) else 0
        for status, value in zip(SubmissionStatus, values, strict=True)
    }
