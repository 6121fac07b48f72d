"""A workspace's view of one of its forms' submissions: a page of the listing, newest
first, and what an export of them takes, under the same filters."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from attrs import frozen

from intake.domain.listing import (
    DEFAULT_PAGE,
    CursorError,
    SearchTextError,
    SubmissionFilter,
    SubmissionQuery,
    decode_cursor,
    encode_cursor,
)
from intake.domain.model import Submission, SubmissionStatus
from intake.service.admin.errors import AdminError
from intake.service.admin.inputs import check_page_limit, page_after
from intake.service.admin.ownership import OwnershipAdmin
from intake.service.admin.submissions import SubmissionAdmin

STATUS, SINCE, UNTIL, SEARCH = "status", "since", "until", "q"


@frozen
class Listed:
    """A page of the listing; `next_cursor` None: it is the last."""

    submissions: tuple[Submission, ...]
    next_cursor: str | None


# Tab counts stop here: past it the inbox says "10,000+", and a count costs no more.
COUNT_LIMIT = 10_000


@frozen
class InboxPage:
    """A page of the inbox: the listing, the cursor of the page before it (None: it is
    the first), and the counts by status (each at most COUNT_LIMIT + 1: more than
    COUNT_LIMIT is all it says then)."""

    listed: Listed
    previous_cursor: str | None
    counts: dict[SubmissionStatus, int]


def submission_filter(
    statuses: Iterable[str] = (),
    since: datetime | None = None,
    until: datetime | None = None,
    text: str | None = None,
) -> SubmissionFilter:
    """The filter of a listing or an export as asked (statuses by name, `text` the search);
    AdminError naming the input that is not right."""
    chosen: set[SubmissionStatus] = set()
    for name in statuses:
        try:
            chosen.add(SubmissionStatus(name))
        except ValueError:
            allowed = ", ".join(status.value for status in SubmissionStatus)
            raise AdminError(f"must be one of {allowed}", field=STATUS) from None
    for name, moment in ((SINCE, since), (UNTIL, until)):
        if moment is not None and moment.utcoffset() is None:
            raise AdminError("must be a time with its offset (RFC 3339)", field=name)
    try:
        return SubmissionFilter(frozenset(chosen), since, until, text)
    except SearchTextError as error:
        raise AdminError(str(error), field=SEARCH) from None


class ListingAdmin(SubmissionAdmin, OwnershipAdmin):
    async def submission_page(
        self,
        workspace_id: str,
        form_id: str,
        chosen: SubmissionFilter,
        *,
        cursor: str | None = None,
        limit: int = DEFAULT_PAGE,
    ) -> Listed:
        """A page of a workspace's form's submissions that `chosen` matches, newest first,
        after the page whose `next_cursor` is `cursor`. NotFoundError for a form of
        another workspace, as for a missing one."""
        check_page_limit(limit)
        after = page_after(cursor, decode_cursor, CursorError)
        await self.owned_form(workspace_id, form_id)
        query = SubmissionQuery(form_id, chosen, after=after, limit=limit)
        page = await self._store.submissions.page(query)
        last = page.submissions[-1].submission_id if page.more else None
        return Listed(page.submissions, encode_cursor(last) if last is not None else None)

    async def inbox_page(
        self,
        workspace_id: str,
        form_id: str,
        chosen: SubmissionFilter,
        *,
        cursor: str | None = None,
        before: str | None = None,
        limit: int = DEFAULT_PAGE,
    ) -> InboxPage:
        """`submission_page` with what the dashboard's inbox shows around it: the page
        before it (`before`: a `previous_cursor`, the newer rows next to it), and the
        form's submissions under `chosen`'s dates and search counted by status, each up
        to COUNT_LIMIT + 1 (one query). Going back past the newest rows gives the first
        page, full."""
        check_page_limit(limit)
        after = page_after(cursor, decode_cursor, CursorError)
        newer_than = page_after(before, decode_cursor, CursorError)
        await self.owned_form(workspace_id, form_id)
        counts = await self._store.submissions.status_counts(form_id, chosen, COUNT_LIMIT + 1)
        if newer_than is not None:
            back = await self._store.submissions.page(
                SubmissionQuery(form_id, chosen, after=newer_than, limit=limit, oldest_first=True)
            )
            if back.more:
                rows = tuple(reversed(back.submissions))
                listed = Listed(rows, encode_cursor(rows[-1].submission_id))
                return InboxPage(listed, encode_cursor(rows[0].submission_id), counts)
            after = None
        page = await self._store.submissions.page(
            SubmissionQuery(form_id, chosen, after=after, limit=limit)
        )
        rows = page.submissions
        last = rows[-1].submission_id if page.more else None
        listed = Listed(rows, encode_cursor(last) if last is not None else None)
        previous = encode_cursor(rows[0].submission_id) if after is not None and rows else None
        return InboxPage(listed, previous, counts)
