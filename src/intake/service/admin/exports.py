"""Exporting a form's submissions: all of them under a filter, the rows of a CSV export,
and their files' content, streamed. Any workspace's form, by id: the operator's
`intake submissions export`, and a route that has found the form its caller's."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator

from attrs import frozen

from intake.domain.listing import ALL, MAX_PAGE, SubmissionFilter, SubmissionQuery
from intake.domain.model import Submission
from intake.domain.uploads import StoredFile
from intake.ports.blobs import BlobStore
from intake.ports.store import Store
from intake.service.admin.errors import AdminError
from intake.service.admin.forms import live_form


@frozen
class CsvRow:
    """A row of a CSV export: the header (no submission), then one per submission. Each
    carries the export's columns: the data fields, in first-seen order, and whether the
    files column is there."""

    fields: tuple[str, ...]
    files: bool
    submission: Submission | None = None


class Exports:
    def __init__(self, store: Store, *, blobs: BlobStore | None = None) -> None:
        self._store = store
        self._blobs = blobs

    async def submissions(
        self, form_id: str, chosen: SubmissionFilter = ALL
    ) -> AsyncIterator[Submission]:
        """The form's submissions that `chosen` matches, oldest first."""
        await live_form(self._store.forms, form_id)
        async for submission in self._store.submissions.iterate(form_id, chosen):
            yield submission

    async def newest(
        self,
        form_id: str,
        chosen: SubmissionFilter = ALL,
        limit: int | None = None,
        *,
        page_size: int = MAX_PAGE,
    ) -> AsyncIterator[Submission]:
        """The form's submissions that `chosen` matches, newest first, as the management
        API lists them; only the newest `limit` when it is given. Read `page_size` at a
        time."""
        await live_form(self._store.forms, form_id)
        after: str | None = None
        left = limit
        while left is None or left > 0:
            size = page_size if left is None else min(left, page_size)
            query = SubmissionQuery(form_id, chosen, after=after, limit=size)
            page = await self._store.submissions.page(query)
            for submission in page.submissions:
                yield submission
            if not page.more or not page.submissions:
                return
            if left is not None:
                left -= len(page.submissions)
            after = page.submissions[-1].submission_id

    @property
    def has_blob_store(self) -> bool:
        """Whether files are kept anywhere (INTAKE_BLOB_URL): `read_file` needs it."""
        return self._blobs is not None

    def read_file(self, stored: StoredFile) -> AsyncGenerator[bytes, None]:
        """A file's content in chunks, streamed from the blob store (see
        `BlobStore.read`: BlobNotFound when the blob is gone)."""
        if self._blobs is None:
            raise AdminError("no blob store is configured (INTAKE_BLOB_URL)")
        return self._blobs.read(stored.key)

    async def csv_rows(self, form_id: str, chosen: SubmissionFilter = ALL) -> AsyncIterator[CsvRow]:
        """The CSV rows, the header first.

        Two passes over the store: the first collects the data fields, so the header is
        known before the first row; the second gives the rows. The store lists oldest
        (lowest id) first, so the second pass stops at the last id the first one saw, and
        a row committed between the passes with fields outside the header is left out:
        every row fits the header. The `files` column is there when the form takes files,
        or a row exported has some."""
        form = await live_form(self._store.forms, form_id)
        fields: dict[str, None] = {}
        files = form.uploads is not None
        last: str | None = None
        async for row in self._store.submissions.iterate(form_id, chosen):
            for name in row.data:
                fields.setdefault(name, None)
            files = files or bool(row.files)
            last = row.submission_id
        columns = tuple(fields)
        yield CsvRow(columns, files)
        if last is None:
            return
        async for row in self._store.submissions.iterate(form_id, chosen):
            if row.submission_id > last:
                break
            if all(name in fields for name in row.data):
                yield CsvRow(columns, files, row)
