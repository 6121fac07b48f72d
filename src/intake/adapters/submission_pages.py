"""The statement of one page of a form's submissions (`SubmissionRepository.page`), once
for both SQL stores: they differ only in how a time is sent and how a search is made.

Every page is led by the form's index on (form_id, submission_id), read forwards or
backwards: keyset pagination, so a deep page costs what the first one does. A status adds
the (form_id, status, submission_id) index to the planner's choice; a search is each
store's own (`Search`)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import datetime

from attrs import evolve, frozen

from intake.adapters import sql_statements as sql
from intake.domain.listing import SubmissionFilter, SubmissionPage, SubmissionQuery
from intake.domain.model import Submission


@frozen
class Search:
    """How a store finds a text in a submission's values: the condition, with one `?`,
    and the parameter it takes for the search as given."""

    condition: str
    parameter: Callable[[str], object]


def like_pattern(text: str) -> str:
    """A LIKE pattern matching `text` anywhere, its own `%`, `_` and `\\` taken as they
    are (the statement says ESCAPE '\\')."""
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def page_statement(
    query: SubmissionQuery, time: Callable[[datetime], object], search: Search
) -> tuple[str, list[object]]:
    """The statement, with `?` placeholders, and its parameters: one more row than the
    page holds, which tells whether more follow."""
    conditions, params = filter_conditions(query.form_id, query.filter, time, search)
    if query.after is not None:
        conditions.append("submission_id > ?" if query.oldest_first else "submission_id < ?")
        params.append(query.after)
    order = "ASC" if query.oldest_first else "DESC"
    statement = (
        f"{sql.SELECT_SUBMISSION} WHERE {' AND '.join(conditions)}"
        f" ORDER BY submission_id {order} LIMIT ?"
    )
    params.append(query.limit + 1)
    return statement, params


def filter_conditions(
    form_id: str, chosen: SubmissionFilter, time: Callable[[datetime], object], search: Search
) -> tuple[list[str], list[object]]:
    """The conditions (to join with AND) that pick the form's submissions `chosen` matches,
    and their parameters, in order."""
    conditions = ["form_id = ?"]
    params: list[object] = [form_id]
    if chosen.statuses:
        statuses = sorted(status.value for status in chosen.statuses)
        conditions.append(f"status IN ({', '.join('?' * len(statuses))})")
        params.extend(statuses)
    if chosen.since is not None:
        conditions.append("created_at >= ?")
        params.append(time(chosen.since))
    if chosen.until is not None:
        conditions.append("created_at < ?")
        params.append(time(chosen.until))
    if chosen.text is not None:
        conditions.append(search.condition)
        params.append(search.parameter(chosen.text))
    return conditions, params


async def each_submission(
    page: Callable[[SubmissionQuery], Awaitable[SubmissionPage]],
    form_id: str,
    chosen: SubmissionFilter,
    batch_size: int,
) -> AsyncIterator[Submission]:
    """`SubmissionRepository.iterate` by pages, oldest first, in every store: one query per
    batch, nothing held between them (on PostgreSQL, no connection either)."""
    if batch_size < 1:
        raise ValueError("batch_size must be at least 1")
    query = SubmissionQuery(form_id, chosen, limit=batch_size, oldest_first=True)
    while True:
        found = await page(query)
        for submission in found.submissions:
            yield submission
        if not found.more:
            return
        query = evolve(query, after=found.submissions[-1].submission_id)
