"""What every dashboard page shares: the templates (autoescaped), the security headers,
the session cookie, the CSRF checks and the `Accounts` service of the serving process."""

from __future__ import annotations

import functools
import secrets
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

import jinja2
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.templating import Jinja2Templates

from intake.accounts_runtime import serving_accounts
from intake.domain.client_network import client_network
from intake.domain.users import same_token
from intake.entrypoints.http.client_ip import client_ip
from intake.entrypoints.http.dashboard.shown_text import isolated, revealed, titled
from intake.entrypoints.http.dashboard.static_files import static_url
from intake.entrypoints.http.dashboard.stylesheet import stylesheet_path
from intake.entrypoints.http.dashboard.wording import file_size, tab_count
from intake.serve_runtime import ServeRuntime
from intake.service.accounts import Accounts, SignedIn
from intake.service.admin import WorkspaceSuspended

PREFIX = "/dashboard"
SESSION_COOKIE = "intake_session"
# Before sign-in there is no session: the sign-in and link forms carry this cookie's
# value in a hidden field instead (double submit), so no other site can post them.
FORM_COOKIE = "intake_form"
CSRF_FIELD = "csrf"
SESSION_COOKIE_AGE = 14 * 24 * 3600
# Session cookies looked up per request at most: the dashboard's own comes first.
MAX_SESSION_COOKIES = 2

# Scripts, styles and images from this origin only, never inline; no framing; no
# referrer to another site (a sign-in link's path is a secret), but this origin's own:
# with "no-referrer" a browser sends `Origin: null` on a form post, which same_origin()
# must refuse; nothing kept by caches.
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self';"
        " object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    ),
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}


def when(value: object) -> object:
    """A time as people read it, to the second in UTC (the `<time>` element around it
    keeps the exact value); anything that is not a time, as it is."""
    moment = value
    if isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            return value
    if not isinstance(moment, datetime) or moment.tzinfo is None:
        return value
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def wait_words(seconds: int) -> str:
    """A limiter's retry time as people read it, rounded up to a whole minute."""
    if seconds < 60:
        return "1 minute" if seconds <= 0 else f"{seconds} seconds"
    minutes = -(-seconds // 60)
    return "1 minute" if minutes == 1 else f"{minutes} minutes"


def throttled(response: Response, retry_after: int) -> Response:
    response.headers["Retry-After"] = str(retry_after)
    return response


_ENVIRONMENT = jinja2.Environment(
    loader=jinja2.FileSystemLoader(Path(__file__).parent / "templates"),
    autoescape=True,  # every value, whatever the file's name
    undefined=jinja2.StrictUndefined,
)
_ENVIRONMENT.filters["when"] = when
# Text the dashboard did not write: in a direction isolate (`revealed` also shows the
# invisible and control characters in it), see shown_text.py.
_ENVIRONMENT.filters["isolated"] = isolated
_ENVIRONMENT.filters["revealed"] = revealed
_ENVIRONMENT.globals["stylesheet"] = stylesheet_path
_ENVIRONMENT.filters["titled"] = titled
_ENVIRONMENT.filters["file_size"] = file_size
_ENVIRONMENT.filters["tab_count"] = tab_count
_ENVIRONMENT.globals["static_url"] = static_url
_TEMPLATES = Jinja2Templates(env=_ENVIRONMENT)


def page(request: Request, name: str, context: dict[str, Any], status: int = 200) -> Response:
    """The template with `context`, and `told`: what the post that led here did (told.py),
    on the page it led to, once."""
    context = {"told": getattr(request.state, "told", None), **context}
    response = _TEMPLATES.TemplateResponse(request, name, context, status_code=status)
    response.headers.update(SECURITY_HEADERS)
    return response


def see_other(path: str) -> Response:
    response = RedirectResponse(path, status_code=303)
    response.headers.update(SECURITY_HEADERS)
    return response


def runtime(request: Request) -> ServeRuntime:
    found: ServeRuntime = request.app.state.runtime
    return found


def accounts(request: Request) -> Accounts:
    """One `Accounts` per application, built on first use from the serving runtime."""
    state = request.app.state
    built: Accounts | None = getattr(state, "dashboard_accounts", None)
    if built is None:
        parts = runtime(request)
        built = serving_accounts(
            parts.settings, parts.store, parts.clock, parts.id_source, parts.rate_limiter
        )
        state.dashboard_accounts = built
    return built


def client(request: Request) -> str:
    settings = runtime(request).settings
    address = client_ip(
        request.client.host if request.client else None,
        ", ".join(request.headers.getlist("x-forwarded-for")) or None,
        settings.trusted_proxies,
    )
    return str(client_network(address, settings.rate_limits.ipv6_prefix))


def _secure(request: Request) -> bool:
    return runtime(request).settings.public_base_url.startswith("https://")


async def signed_in(request: Request) -> SignedIn | None:
    for secret in _cookie_values(request, SESSION_COOKIE)[:MAX_SESSION_COOKIES]:
        if secret and len(secret) <= 100:
            found = await accounts(request).sessions.session(secret)
            if found is not None:
                return found
    return None


def _cookie_values(request: Request, name: str) -> list[str]:
    """Every value the browser sent under `name`, the most specific path first. A
    cookie of that name planted for "/" by anything else on this host is sent after the
    dashboard's own, and must not hide it (request.cookies keeps only the last)."""
    values = []
    for part in request.headers.get("cookie", "").split(";"):
        key, _, value = part.strip().partition("=")
        if key == name:
            values.append(value.strip('"'))
    return values


def start_session(response: Response, request: Request, signed: SignedIn) -> Response:
    response.set_cookie(
        SESSION_COOKIE,
        signed.secret,
        max_age=SESSION_COOKIE_AGE,
        path=PREFIX,
        httponly=True,
        samesite="lax",
        secure=_secure(request),
    )
    response.delete_cookie(FORM_COOKIE, path=PREFIX)
    return response


SIGN_IN = PREFIX + "/sign-in"
_NOT_RETURNED_TO = (SIGN_IN, PREFIX + "/sign-out")
MAX_RETURN_PATH = 2000


def return_path(value: object) -> str | None:
    """A page to come back to after sign-in: a path of this dashboard (a query may
    follow), never an address elsewhere (a scheme, `//host`, a backslash, which browsers
    read as a slash, a dot segment, encoded or not), nor a sign-in or sign-out page.
    None for anything else."""
    if not isinstance(value, str) or not 0 < len(value) <= MAX_RETURN_PATH:
        return None
    if not value.isprintable() or any(c in value for c in "\\ #"):
        return None
    path, _, _ = value.partition("?")
    if path != PREFIX and not path.startswith(PREFIX + "/"):
        return None
    # Browsers read `%2e` as a dot in a path: `/dashboard/%2e%2e/x` is `/x`.
    segments = f"{path}/".replace("%2e", ".").replace("%2E", ".")
    if "//" in path or "/./" in segments or "/../" in segments:
        return None
    if any(path == p or path.startswith(p + "/") for p in _NOT_RETURNED_TO):
        return None
    parts = urlsplit(value)
    return value if not parts.scheme and not parts.netloc else None


def sign_in_for(request: Request) -> str:
    """The way to the sign-in page, which leads back to this page once signed in: a page
    read (GET) only, since a post cannot be replayed by a redirect."""
    here = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    back = return_path(here) if request.method == "GET" else None
    if back is None or back == PREFIX:
        return SIGN_IN
    return f"{SIGN_IN}?{urlencode({'next': back}, safe='/')}"


SignedInHandler = Callable[[Request, SignedIn], Awaitable[Response]]


def requires_sign_in(handler: SignedInHandler) -> Callable[[Request], Awaitable[Response]]:
    """A page for a signed-in user: without a live session, the way to the sign-in page
    (the stale cookie cleared); with one, the handler with who is signed in."""

    @functools.wraps(handler)
    async def route(request: Request) -> Response:
        signed = await signed_in(request)
        if signed is None:
            return end_session(see_other(sign_in_for(request)), request)
        await _take_told(request, signed)
        try:
            return await handler(request, signed)
        except WorkspaceSuspended:  # services.workspaces.acting: the one rule, said once here
            return page(request, "suspended.html", {"email": signed.user.email}, status=403)

    return route


# A redirect's `told=1` says that the post before kept a message for the page it leads to
# (told.py): only then is the session's note looked up, so other pages cost no query.
TOLD_FLAG = "told"
TOLD_NOTE = "told"


async def _take_told(request: Request, signed: SignedIn) -> None:
    if request.method == "GET" and request.query_params.get(TOLD_FLAG) == "1":
        note = await accounts(request).notes.take_secret(signed, TOLD_NOTE, request.url.path)
        request.state.told = note


def end_session(response: Response, request: Request) -> Response:
    response.delete_cookie(
        SESSION_COOKIE, path=PREFIX, httponly=True, samesite="lax", secure=_secure(request)
    )
    return response


def form_token(request: Request) -> str:
    """The pre-sign-in form's token: the browser's, or a new one to set. When another
    cookie of the name was planted beside the dashboard's own, its value may be one the
    planter chose: a new token replaces both."""
    sent = _cookie_values(request, FORM_COOKIE)
    if len(sent) == 1 and 20 <= len(sent[0]) <= 100:
        return sent[0]
    return secrets.token_urlsafe(32)


def form_cookie(request: Request) -> str:
    """The dashboard's own pre-sign-in cookie: the most specific path comes first."""
    sent = _cookie_values(request, FORM_COOKIE)
    return sent[0] if sent else ""


def with_form_cookie(response: Response, request: Request, token: str) -> Response:
    response.set_cookie(
        FORM_COOKIE,
        token,
        path=PREFIX,
        httponly=True,
        samesite="strict",
        secure=_secure(request),
    )
    return response


def same_origin(request: Request) -> bool:
    """A browser says where a form was posted from; another site's is refused. No Origin
    (an old browser, a script) is left to the CSRF token."""
    origin = request.headers.get("origin")
    if origin is None:
        return True
    own = {f"{request.url.scheme}://{request.url.netloc}"}
    base = urlsplit(runtime(request).settings.public_base_url)
    own.add(f"{base.scheme}://{base.netloc}")
    return origin in own


def token_matches(sent: object, expected: str) -> bool:
    return isinstance(sent, str) and bool(expected) and same_token(sent, expected)
