"""Submissions as their owners read them: one by id (any workspace's for the operator, a
workspace's own for its programs and owners), with its files and deliveries, and a page
of a form's listing, newest first, under the filters an export takes too."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from attrs import frozen

from intake.domain.deliveries import DestinationKind
from intake.domain.listing import (
    DEFAULT_PAGE,
    CursorError,
    SearchTextError,
    SubmissionFilter,
    SubmissionQuery,
    decode_cursor,
    encode_cursor,
)
from intake.domain.model import Submission, SubmissionStatus, describe_files
from intake.domain.signing import DownloadSigner
from intake.ports.clock import Clock
from intake.ports.deliveries import DeliveryRecord
from intake.ports.store import Store
from intake.service.admin.errors import AdminError, NotFoundError
from intake.service.admin.inputs import check_page_limit, page_after
from intake.service.admin.ownership import Ownership

STATUS, SINCE, UNTIL, SEARCH = "status", "since", "until", "q"


@frozen
class Listed:
    """A page of the listing; `next_cursor` None: it is the last."""

    submissions: tuple[Submission, ...]
    next_cursor: str | None


@frozen
class SubmissionDetail:
    """One submission as its owner reads it: its files with fresh links, and every
    delivery of its events with their attempts."""

    submission: Submission
    files: list[dict[str, object]]
    deliveries: list[DeliveryRecord]


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


class Submissions:
    def __init__(
        self,
        store: Store,
        clock: Clock,
        ownership: Ownership,
        *,
        signer: DownloadSigner | None = None,
    ) -> None:
        self._store = store
        self._clock = clock
        self._owned = ownership
        self._signer = signer

    async def get(self, submission_id: str) -> Submission:
        """Any workspace's submission, by id (the operator's)."""
        submission = await self._store.submissions.get(submission_id)
        if submission is None:
            raise NotFoundError(f"no submission {submission_id!r}")
        return submission

    async def owned(self, workspace_id: str, submission_id: str) -> Submission:
        """A submission of another workspace is not found, exactly as a missing one."""
        return await self._owned.submission(workspace_id, submission_id)

    def files_view(self, submission: Submission) -> list[dict[str, object]]:
        """A submission's files as an operator reads them: each with a download link
        valid from now, when links can be signed."""
        return describe_files(submission, self._signer, self._clock.now())

    async def detail(self, workspace_id: str, submission_id: str) -> SubmissionDetail:
        """The workspace's submission with its files' links and its deliveries."""
        submission = await self.owned(workspace_id, submission_id)
        deliveries = [
            record
            for record in await self._store.deliveries.submission_deliveries(submission_id)
            # Reports to Akismet are the operator's (`intake outbox list`), not the owner's.
            if record.delivery.kind is not DestinationKind.AKISMET
        ]
        return SubmissionDetail(submission, self.files_view(submission), deliveries)

    async def page(
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
        await self._owned.form(workspace_id, form_id)
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
        """`page` with what the dashboard's inbox shows around it: the page
        before it (`before`: a `previous_cursor`, the newer rows next to it), and the
        form's submissions under `chosen`'s dates and search counted by status, each up
        to COUNT_LIMIT + 1 (one query). Going back past the newest rows gives the first
        page, full."""
        check_page_limit(limit)
        after = page_after(cursor, decode_cursor, CursorError)
        newer_than = page_after(before, decode_cursor, CursorError)
        await self._owned.form(workspace_id, form_id)
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
