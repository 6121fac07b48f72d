"""A form's inbox: its submissions by status (accepted, spam, unverified), searched and
filtered by date, a page at a time, newest first; and the export of the same filtered
set as CSV or JSON lines. Bulk triage is in `bulk.py`."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, date, datetime, time, timedelta
from urllib.parse import urlencode

from attrs import frozen
from starlette.requests import Request
from starlette.responses import Response

from intake.domain.listing import MAX_TEXT, SubmissionFilter
from intake.domain.model import Form, Submission, SubmissionStatus
from intake.entrypoints.http.dashboard import web
from intake.entrypoints.http.dashboard.charts import form_chart
from intake.entrypoints.http.exports import EXPORT_TYPES, export_response
from intake.service.accounts import SignedIn
from intake.service.admin import AdminError, InboxPage, NotFoundError, submission_filter

FORMS = web.PREFIX + "/forms"
KEPT = ("status", "q", "since", "until", "per_page")  # the filter, kept across pages
SIGN_IN = web.PREFIX + "/sign-in"
STATUSES = tuple(status.value for status in SubmissionStatus)
PAGE_SIZES = (25, 50)
PREVIEW = 120  # characters of a row's one-line preview


_STALE = "This page link is not valid any more: start from the first page."


class BadQueryError(Exception):
    """A query parameter the inbox cannot use; the message says which and why."""


@frozen
class InboxQuery:
    """What the inbox shows, as read from its URL: `params` are the filters to keep in
    every link it makes (tabs, pages, export)."""

    status: str
    q: str
    since: str
    until: str
    per_page: int
    cursor: str | None
    before: str | None = None  # a previous page: the cursor of the page after it

    def params(self, **changed: str | int) -> dict[str, str | int]:
        kept: dict[str, str | int] = {"status": self.status}
        for name in ("q", "since", "until"):
            if getattr(self, name):
                kept[name] = getattr(self, name)
        if self.per_page != PAGE_SIZES[0]:
            kept["per_page"] = self.per_page
        kept.update(changed)
        return kept

    def url(self, path: str, **changed: str | int) -> str:
        return f"{path}?{urlencode(self.params(**changed))}"

    def here(self, path: str, **changed: str | int) -> str:
        """This very page's address (its cursor kept), with `changed`."""
        where = {"cursor": self.cursor, "before": self.before}
        return self.url(path, **{k: v for k, v in where.items() if v}, **changed)

    @property
    def filtered(self) -> bool:
        return bool(self.q or self.since or self.until)

    def chosen(self) -> SubmissionFilter:
        try:
            return submission_filter(
                [self.status],
                _moment(self.since, "since", 0),
                _moment(self.until, "until", 1),
                self.q or None,
            )
        except AdminError as error:
            raise BadQueryError(f"{_LABELS.get(error.field or '', 'Filter')}: {error}.") from None


_LABELS = {"q": "Search", "since": "From", "until": "To", "status": "Status"}


def read_query(params: Mapping[str, str]) -> InboxQuery:
    """The inbox's query from a URL's parameters (or a bulk post's copy of them); a value
    that is not usable is left out of the links, and `problems` reports it."""
    status = params.get("status", STATUSES[0])
    size = params.get("per_page", str(PAGE_SIZES[0]))
    return InboxQuery(
        status=status if status in STATUSES else STATUSES[0],
        q=params.get("q", "").strip()[: MAX_TEXT + 1],
        since=params.get("since", "").strip()[:40],
        until=params.get("until", "").strip()[:40],
        per_page=int(size) if size in {str(n) for n in PAGE_SIZES} else PAGE_SIZES[0],
        cursor=params.get("cursor") or None,
        before=None if params.get("cursor") else params.get("before") or None,
    )


def problems(params: Mapping[str, str]) -> list[str]:
    found = []
    if params.get("status", STATUSES[0]) not in STATUSES:
        found.append(f"Status: must be one of {', '.join(STATUSES)}.")
    if params.get("per_page", str(PAGE_SIZES[0])) not in {str(n) for n in PAGE_SIZES}:
        found.append("Per page: must be 25 or 50.")
    return found


def _moment(text: str, name: str, days_after: int) -> datetime | None:
    """A date (the whole day: `until` ends after it) or an RFC 3339 time; None if empty."""
    if not text:
        return None
    try:
        day = date.fromisoformat(text)
    except ValueError:
        pass
    else:
        return datetime.combine(day + timedelta(days=days_after), time(), tzinfo=UTC)
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        label = _LABELS[name]
        message = f"{label}: give a date (2026-01-31) or a time with its offset."
        raise BadQueryError(message) from None
    if moment.utcoffset() is None:
        raise BadQueryError(f"{_LABELS[name]}: give the time's offset (Z or +01:00).")
    return moment


async def owned_form(request: Request, signed: SignedIn, form_id: str) -> Form:
    """The form, when one of the user's workspaces has it; NotFoundError otherwise."""
    services = web.runtime(request).services
    for membership in signed.memberships:
        try:
            return await services.forms.owned(membership.workspace_id, form_id)
        except NotFoundError:
            continue
    raise NotFoundError(f"no form {form_id!r}")


SEPARATOR, COLON, ELLIPSIS = " · ", ": ", "…"


def preview(submission: Submission) -> list[tuple[str, str | None]]:
    """The fields as (name, value) pairs, each on one line, read as `name: value` joined
    by SEPARATOR and cut to PREVIEW characters: an ellipsis ends the name or value cut
    (a name cut has no value, None). The template shows each name and value apart,
    escaped and isolated, so none can reorder the others."""
    pairs = [
        (_one_line(name), _one_line(_joined(value))) for name, value in submission.data.items()
    ]
    whole = sum(len(n) + len(COLON) + len(v) for n, v in pairs) + len(SEPARATOR) * (len(pairs) - 1)
    if whole <= PREVIEW:
        return list(pairs)
    room = PREVIEW - len(ELLIPSIS)
    kept: list[tuple[str, str | None]] = []
    for name, value in pairs:
        room -= len(SEPARATOR) if kept else 0
        if room < len(name) + len(COLON):
            if room > 0 or not kept:
                kept.append((name[: max(room, 0)] + ELLIPSIS, None))
            else:  # not even the separator fits: the previous value ends here
                last_name, last_value = kept[-1]
                kept[-1] = (last_name, f"{last_value or ''}{ELLIPSIS}")
            break
        room -= len(name) + len(COLON)
        if len(value) > room:
            kept.append((name, value[:room] + ELLIPSIS))
            break
        kept.append((name, value))
        room -= len(value)
    return kept


def _joined(value: object) -> str:
    return ", ".join(map(str, value)) if isinstance(value, list | tuple) else str(value)


def _one_line(text: str) -> str:
    return " ".join(text.split())


@web.requires_sign_in
async def inbox_page(request: Request, signed: SignedIn) -> Response:
    try:
        form = await owned_form(request, signed, request.path_params["form_id"])
    except NotFoundError:
        return web.page(request, "not_found.html", {}, status=404)
    return await render(
        request, signed, form, read_query(request.query_params), problems(request.query_params)
    )


async def render(
    request: Request, signed: SignedIn, form: Form, query: InboxQuery, errors: list[str]
) -> Response:
    services = web.runtime(request).services
    listed: InboxPage | None = None
    if not errors:
        try:
            listed = await services.submissions.inbox_page(
                form.workspace_id,
                form.form_id,
                query.chosen(),
                cursor=query.cursor,
                before=query.before,
                limit=query.per_page,
            )
        except BadQueryError as error:
            errors.append(str(error))
        except NotFoundError:  # the form was deleted meanwhile
            return web.page(request, "not_found.html", {}, status=404)
        except AdminError as error:
            stale = error.field == "cursor"
            errors.append(_STALE if stale else f"{error}.")
    rows = [_row(s) for s in listed.listed.submissions] if listed else []
    context = {
        "csrf": signed.csrf,
        "email": signed.user.email,
        "form": form,
        "owner": signed.configures(form.workspace_id),  # owners reach its settings
        "current": "inbox",
        "query": query,
        "path": _path(form),
        "tabs": _tabs(query, _path(form), listed),
        "total": listed.counts[SubmissionStatus(query.status)] if listed else None,
        "rows": rows,
        "errors": errors,
        **_page_links(query, _path(form), listed),
        "select_all": request.query_params.get("select") == "page",
        "exports": [(f, query.url(_path(form) + "/export", format=f)) for f in EXPORT_TYPES],
        "page_sizes": PAGE_SIZES,
        "kept": query.params(),
        "spam_days": web.runtime(request).settings.spam_retention_days,  # 0: forever
        "chart": await form_chart(request, form.form_id),
    }
    return web.page(request, "inbox.html", context, status=422 if errors else 200)


def _tabs(query: InboxQuery, path: str, listed: InboxPage | None) -> list[dict[str, object]]:
    """Each status's tab: its link (the filter kept, from the first page) and its count
    under the same dates and search (None when the page could not be read)."""
    return [
        {
            "status": status,
            "url": query.url(path, status=status),
            "count": listed.counts[SubmissionStatus(status)] if listed else None,
        }
        for status in STATUSES
    ]


_LINKS = ("first_url", "previous_url", "next_url", "select_url", "unselect_url")


def _page_links(query: InboxQuery, path: str, listed: InboxPage | None) -> dict[str, str | None]:
    if listed is None:
        return dict.fromkeys(
            ("first_url", "previous_url", "next_url", "select_url", "unselect_url")
        )
    previous, following = listed.previous_cursor, listed.listed.next_cursor
    return {
        "first_url": query.url(path) if previous else None,
        "previous_url": query.url(path, before=previous) if previous else None,
        "next_url": query.url(path, cursor=following) if following else None,
        "select_url": query.here(path, select="page") + "#submissions",
        "unselect_url": query.here(path) + "#submissions",
    }


def _path(form: Form) -> str:
    return f"{FORMS}/{form.form_id}"


def _row(submission: Submission) -> dict[str, object]:
    return {
        "id": submission.submission_id,
        "time": submission.created_at.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "preview": preview(submission),
        "files": len(submission.files),
        "about": _about(submission),
        "status": submission.status.value,
        "url": f"{web.PREFIX}/submissions/{submission.submission_id}",
    }


LABEL_PART = 60  # characters of a sender or subject in a row's checkbox label


def _about(submission: Submission) -> list[str]:
    """What tells a row apart to a screen reader, beside its time: its sender and subject
    when it has them, else the start of its first value."""
    parts = [
        _one_line(text)[:LABEL_PART]
        for text in (submission.reply_to, submission.subject)
        if isinstance(text, str) and text.strip()
    ]
    if not parts and submission.data:
        parts.append(_one_line(_joined(next(iter(submission.data.values()))))[:LABEL_PART])
    return parts


@web.requires_sign_in
async def export(request: Request, signed: SignedIn) -> Response:
    """The inbox's current filter (tab, search, dates), every page of it, as a file."""
    try:
        form = await owned_form(request, signed, request.path_params["form_id"])
    except NotFoundError:
        return web.page(request, "not_found.html", {}, status=404)
    await web.runtime(request).services.workspaces.acting(form.workspace_id)  # sends nothing out
    query = read_query(request.query_params)
    errors = problems(request.query_params)
    fmt = request.query_params.get("format", "csv")
    if fmt not in EXPORT_TYPES:
        errors.append("Export: the format must be csv or jsonl.")
    if errors:
        return await render(request, signed, form, query, errors)
    try:
        chosen = query.chosen()
    except BadQueryError as error:
        return await render(request, signed, form, query, [str(error)])
    response = export_response(web.runtime(request).services, form.form_id, fmt, chosen)
    response.headers.update(web.SECURITY_HEADERS)
    return response
