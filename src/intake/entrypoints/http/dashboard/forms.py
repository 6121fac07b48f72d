"""Reading a posted dashboard form: small, from this site, with the right CSRF token."""

from __future__ import annotations

from starlette.datastructures import FormData
from starlette.requests import Request

from intake.entrypoints.http.dashboard import web

MAX_FORM_BYTES = 16 * 1024  # an address and two passwords fit many times over


class BadFormError(Exception):
    """A post that is too large, unreadable, or from another site: refused whole."""


async def read_form(request: Request, expected_csrf: str, max_fields: int = 10) -> FormData:
    size = request.headers.get("content-length", "")
    if not web.same_origin(request) or (size.isdigit() and int(size) > MAX_FORM_BYTES):
        raise BadFormError
    try:
        form = await request.form(max_files=0, max_fields=max_fields, max_part_size=MAX_FORM_BYTES)
    except Exception:
        raise BadFormError from None
    if not web.token_matches(form.get(web.CSRF_FIELD), expected_csrf):
        raise BadFormError
    return form


def text(form: FormData, name: str) -> str:
    value = form.get(name)
    return value if isinstance(value, str) else ""
