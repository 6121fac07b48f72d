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
