"""Which of a form's submissions a listing or an export takes, and in what order: the rule
once, for every store, and the listing's cursor."""

from __future__ import annotations

import base64
import binascii
import re
from datetime import datetime

from attrs import field, frozen

from intake.domain import ids
from intake.domain.model import FieldData, Submission, SubmissionStatus, texts_of

MAX_TEXT = 200  # characters of a search (`q`)
MIN_PAGE, MAX_PAGE, DEFAULT_PAGE = 1, 200, 50
# Between a submission's values in its search text: a search holds no control character
# (SearchTextError), so it never matches across two values.
SEARCH_SEPARATOR = "\n"
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_CURSOR_VERSION = "v1"


class SearchTextError(ValueError):
    pass


class CursorError(ValueError):
    pass


def check_search(text: str) -> str:
    """A search as given (`q`): 1 to MAX_TEXT characters, no control character."""
    if not 1 <= len(text) <= MAX_TEXT:
        raise SearchTextError(f"must be 1 to {MAX_TEXT} characters")
    if _CONTROL.search(text):
        raise SearchTextError("must not hold control characters")
    return text


def _valid_text(text: str | None) -> None:
    if text is not None:
        check_search(text)


def _valid_limit(limit: int) -> None:
    if limit < 1:
        raise ValueError("a page holds at least one submission")


def search_text(data: FieldData) -> str:
    """What a search looks in: every text value of the data, lowered, one per line. Field
    names, numbers and booleans are not searched."""
    return SEARCH_SEPARATOR.join(s.lower() for v in data.values() for s in texts_of(v))


@frozen
class SubmissionFilter:
    """Which submissions: any of `statuses` (none: all), created at or after `since` and
    before `until`, and holding `text` in a value, whatever its case."""

    statuses: frozenset[SubmissionStatus] = frozenset()
    since: datetime | None = None
    until: datetime | None = None
    text: str | None = field(default=None, validator=lambda _s, _a, v: _valid_text(v))

    def matches(self, submission: Submission) -> bool:
        if self.statuses and submission.status not in self.statuses:
            return False
        if self.since is not None and submission.created_at < self.since:
            return False
        if self.until is not None and submission.created_at >= self.until:
            return False
        return self.text is None or self.text.lower() in search_text(submission.data)


ALL = SubmissionFilter()


@frozen
class SubmissionQuery:
    """One page of a form's submissions under a filter, newest (highest id) first, or
    oldest first with `oldest_first`; `after`: the last id of the page before (None: from
    the start). Ids are time-sortable, so their order is the order of arrival, and a page
    goes on from the last id given whatever was added or deleted since."""

    form_id: str
    filter: SubmissionFilter = ALL
    after: str | None = None
    limit: int = field(default=DEFAULT_PAGE, validator=lambda _s, _a, v: _valid_limit(v))
    oldest_first: bool = False

    def follows(self, submission_id: str) -> bool:
        """Whether `submission_id` comes after `after` in this query's order."""
        if self.after is None:
            return True
        return submission_id > self.after if self.oldest_first else submission_id < self.after


@frozen
class SubmissionPage:
    submissions: tuple[Submission, ...]
    more: bool  # whether submissions follow the last one given


def encode_cursor(submission_id: str) -> str:
    """Opaque to clients: base64url of a versioned text naming the last id seen."""
    text = f"{_CURSOR_VERSION}:{submission_id}".encode()
    return base64.urlsafe_b64encode(text).decode("ascii").rstrip("=")


def decode_cursor(cursor: str) -> str:
    """The submission id a cursor names; CursorError for anything `encode_cursor` did not
    make."""
    if not 1 <= len(cursor) <= 100 or not cursor.isascii():
        raise CursorError("is not a cursor of this listing")
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode("ascii")
    except (binascii.Error, ValueError):
        raise CursorError("is not a cursor of this listing") from None
    version, _, submission_id = text.partition(":")
    if version != _CURSOR_VERSION or not ids.is_submission_id(submission_id):
        raise CursorError("is not a cursor of this listing")
    return submission_id
