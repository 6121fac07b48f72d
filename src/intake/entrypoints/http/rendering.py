"""Outcomes as HTTP responses: the JSON envelope, the browser's 303 and HTML pages.

Statuses and messages come from the domain's error table; nothing is invented here. A
browser's page of a refusal it can put right from the form (a field to correct, a
submission to shorten, a moment to wait) also says so, and shows the way back to the
form (docs/decisions.md "Browsers").
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from json.encoder import encode_basestring
from urllib.parse import quote

from attrs import frozen
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from intake.domain.errors import ErrorCode, Rejection
from intake.domain.model import Form
from intake.domain.origins import redirect_target
from intake.entrypoints.http.pages import error_page
from intake.service.messages import CONFIRMATION, Accepted, Outcome, Refused

JSON_TYPE = "application/json"
HTML_TYPE = "text/html; charset=utf-8"
# Pages carry no script and load nothing: a hostile value could not run even if one
# slipped past the escaping. Nor can another site frame them (default-src does not
# cover framing, base URLs or form targets, so those are named).
HTML_HEADERS: Mapping[str, str] = {
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; "
        "form-action 'none'; frame-ancestors 'none'"
    ),
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


# What a URL may hold as it is; anything else (non-ASCII, spaces, control characters) is
# percent-encoded as UTF-8, as a browser itself would send it. Existing escapes are kept.
_URL_SAFE = "!#$%&'()*+,/:;=?@[]~"


def _location(url: str) -> str:
    """A Location value that is plain ASCII: the submission is committed by now, and a
    header that cannot be encoded must not turn that success into an error."""
    return quote(url, safe=_URL_SAFE)


# The refusals a visitor puts right by going back to the form, and what else to tell them.
_GO_BACK = frozenset(
    {
        ErrorCode.VALIDATION_FAILED,
        ErrorCode.PAYLOAD_TOO_LARGE,
        ErrorCode.RATE_LIMITED,
        ErrorCode.CHALLENGE_FAILED,
        ErrorCode.SERVICE_UNAVAILABLE,
    }
)
_ADVICE: Mapping[ErrorCode, str] = {
    ErrorCode.PAYLOAD_TOO_LARGE: "Shorten your answers or send smaller files, then try again.",
}


@frozen
class FormPage:
    """The page a refused submission came from: `url` is where a link may lead back to,
    None when the request named no page on the form's own origins."""

    url: str | None = None


def form_page(referer: str | None, origin: str | None, form: Form | None) -> FormPage:
    """The submitting page, from the Referer, when it is on the request's own Origin or
    on the form's allowed list, checked as `_next` is, so that the page never links off
    them (nor to a `javascript:` URL). A Referer is absolute: a path is none."""
    if not referer or referer.startswith("/"):
        return FormPage()
    url = redirect_target(
        redirect_url=None,
        next_url=referer,
        request_origin=origin,
        allowed=form.allowed_origins if form is not None else (),
    )
    return FormPage(_location(url) if url is not None else None)


def _page(rejection: Rejection, status: int, title: str | None, came_from: FormPage | None) -> str:
    back = came_from is not None and rejection.code in _GO_BACK
    return error_page(
        status,
        rejection.message,
        title=title,
        fields=rejection.fields if rejection.code is ErrorCode.VALIDATION_FAILED else None,
        advice=_ADVICE.get(rejection.code) if back else None,
        back=back,
        back_url=came_from.url if back and came_from is not None else None,
    )


def _json_bytes(body: Mapping[str, object]) -> bytes:
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _json(body: Mapping[str, object] | bytes, status: int, headers: dict[str, str]) -> Response:
    payload = body if isinstance(body, bytes) else _json_bytes(body)
    headers.setdefault("Cache-Control", "no-store")
    # error.fields can name a field the sender chose: never let a browser sniff it as HTML.
    headers.setdefault("X-Content-Type-Options", "nosniff")
    return Response(payload, status_code=status, headers=headers, media_type=JSON_TYPE)


def error_response(
    rejection: Rejection,
    request_id: str,
    *,
    browser: bool = False,
    status: int | None = None,
    headers: Mapping[str, str] | None = None,
    title: str | None = None,
    came_from: FormPage | None = None,
) -> Response:
    """The refusal as the envelope, or for a browser as a page: titled `title` (by the
    status if None), with the way back to the form when `came_from` is given."""
    code = status or rejection.status
    extra = dict(headers or {})
    if rejection.retry_after is not None:
        extra["Retry-After"] = str(rejection.retry_after)
    if browser:
        extra.update(HTML_HEADERS)
        return Response(
            _page(rejection, code, title, came_from),
            status_code=code,
            headers=extra,
            media_type=HTML_TYPE,
        )
    error: dict[str, object] = {"code": rejection.code.value, "message": rejection.message}
    if rejection.code is ErrorCode.VALIDATION_FAILED:
        error["fields"] = dict(rejection.fields or {})
    return _json({"ok": False, "error": error, "request_id": request_id}, code, extra)


def success_body(submission_id: str) -> dict[str, object]:
    return {"ok": True, "submission_id": submission_id, "message": CONFIRMATION}


# success_body as _json writes it, split where the id goes: every accepted submission
# is answered with it, and json.dumps with options makes an encoder at each call (a
# tenth of the cost). A NUL, which JSON writes escaped, marks the place.
_SUCCESS_START, _SUCCESS_END = _json_bytes(success_body("\0")).split(b'"\\u0000"')


def success_json(submission_id: str) -> bytes:
    return _SUCCESS_START + encode_basestring(submission_id).encode("utf-8") + _SUCCESS_END


# An accepted submission's JSON answer's headers, as `_json` would set them through a
# Starlette Response, in its order; the length follows, then the type.
_ACCEPTED_HEADERS = ((b"cache-control", b"no-store"), (b"x-content-type-options", b"nosniff"))
_REPLAYED_HEADERS = ((b"idempotent-replayed", b"true"), *_ACCEPTED_HEADERS)
_JSON_TYPE_HEADER = (b"content-type", JSON_TYPE.encode("latin-1"))


class AcceptedJson:
    """An accepted submission's JSON answer, sent as its two ASGI messages: the same
    bytes a Starlette Response with `_json`'s headers sends, less the making of that
    Response (its headers' encoding and checks), which every accepted submission paid."""

    __slots__ = ("_body", "_headers", "_status")

    def __init__(self, submission_id: str, status: int, *, replayed: bool) -> None:
        self._body = success_json(submission_id)
        self._status = status
        self._headers = _REPLAYED_HEADERS if replayed else _ACCEPTED_HEADERS

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        length = (b"content-length", str(len(self._body)).encode("latin-1"))
        await send(
            {
                "type": "http.response.start",
                "status": self._status,
                "headers": [*self._headers, length, _JSON_TYPE_HEADER],
            }
        )
        await send({"type": "http.response.body", "body": self._body})


def outcome_response(
    outcome: Outcome,
    request_id: str,
    *,
    browser: bool,
    origin: str | None,
    referer: str | None = None,
    headers: Mapping[str, str] | None = None,
) -> ASGIApp:
    """The answer to a submission; a Starlette Response but for an accepted
    submission's JSON answer (AcceptedJson) when no other headers are asked for."""
    if isinstance(outcome, Accepted) and not browser and not headers:
        return AcceptedJson(outcome.submission_id, outcome.status, replayed=outcome.replayed)
    extra = dict(headers or {})
    if isinstance(outcome, Refused):
        came_from = form_page(referer, origin, outcome.form) if browser else None
        return error_response(
            outcome.rejection, request_id, browser=browser, headers=extra, came_from=came_from
        )
    assert isinstance(outcome, Accepted)
    if outcome.replayed:
        extra["Idempotent-Replayed"] = "true"
    if browser:
        form = outcome.form
        location = redirect_target(
            redirect_url=form.redirect_url,
            next_url=outcome.next_url,
            request_origin=origin,
            allowed=form.allowed_origins,
        ) or thanks_path(form.public_form_key)
        extra["Location"] = _location(location)
        extra["Cache-Control"] = "no-store"
        return Response(status_code=303, headers=extra)
    return _json(success_json(outcome.submission_id), outcome.status, extra)


def thanks_path(public_form_key: str) -> str:
    return f"/f/{public_form_key}/thanks"
