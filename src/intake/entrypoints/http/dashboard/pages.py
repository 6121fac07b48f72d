"""The dashboard's sign-in, set-password, sign-out and password pages. Plain HTML forms:
everything works without JavaScript."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from intake.entrypoints.http.dashboard import web
from intake.entrypoints.http.dashboard.forms import BadFormError, read_form, text
from intake.entrypoints.http.dashboard.told import tell
from intake.service.accounts import (
    LinkRefused,
    SignedIn,
    SignInRefused,
    SignInThrottled,
)
from intake.service.admin import AdminError

SIGN_IN = web.SIGN_IN
HOME = web.PREFIX
REFUSED = "Wrong email address or password."


def _refused_form(request: Request) -> Response:
    return web.page(request, "refused.html", {}, status=403)


def _sign_in_page(
    request: Request,
    *,
    email: str = "",
    back: str | None = None,
    error: str | None = None,
    status: int = 200,
) -> Response:
    token = web.form_token(request)
    context = {"csrf": token, "email": email, "error": error, "next": back}
    response = web.page(request, "sign_in.html", context, status=status)
    return web.with_form_cookie(response, request, token)


async def sign_in_form(request: Request) -> Response:
    """`next`: the page asked for before sign-in, where signing in leads (a path of the
    dashboard only: `web.return_path`)."""
    back = web.return_path(request.query_params.get("next"))
    if await web.signed_in(request) is not None:
        return web.see_other(back or HOME)
    return _sign_in_page(request, back=back)


async def sign_in(request: Request) -> Response:
    try:
        form = await read_form(request, web.form_cookie(request))
    except BadFormError:
        return _refused_form(request)
    email = text(form, "email")
    back = web.return_path(text(form, "next"))
    try:
        signed = await web.accounts(request).sessions.sign_in(
            email, text(form, "password"), web.client(request)
        )
    except SignInRefused:
        return _sign_in_page(request, email=email, back=back, error=REFUSED, status=401)
    except SignInThrottled as throttled:
        message = f"Too many attempts: try again in {web.wait_words(throttled.retry_after)}."
        response = _sign_in_page(request, email=email, back=back, error=message, status=429)
        return web.throttled(response, throttled.retry_after)
    return web.start_session(web.see_other(back or HOME), request, signed)


def _password_page(
    request: Request, token: str, account: str, *, error: str | None = None, status: int = 200
) -> Response:
    csrf = web.form_token(request)
    context = {"csrf": csrf, "action": f"{SIGN_IN}/{token}", "account": account, "error": error}
    response = web.page(request, "set_password.html", context, status=status)
    return web.with_form_cookie(response, request, csrf)


def _link_refused(request: Request) -> Response:
    return web.page(request, "link_refused.html", {}, status=410)


async def link_form(request: Request) -> Response:
    """The password form of a usable link, naming its account (a password manager saves
    the password under it); 410 for a link used, expired or unknown."""
    token: str = request.path_params["token"]
    try:
        user = await web.accounts(request).sessions.link_user(token)
    except LinkRefused:
        return _link_refused(request)
    return _password_page(request, token, user.email)


async def use_link(request: Request) -> Response:
    token: str = request.path_params["token"]
    try:
        form = await read_form(request, web.form_cookie(request))
    except BadFormError:
        return _refused_form(request)
    accounts = web.accounts(request)
    try:
        account = (await accounts.sessions.link_user(token)).email
        password = text(form, "password")
        if password != text(form, "confirm"):
            return _password_page(
                request, token, account, error="The passwords differ.", status=422
            )
        try:
            signed = await accounts.sessions.use_link(token, password)
        except AdminError as error:
            message = f"Password: {error}."
            return _password_page(request, token, account, error=message, status=422)
    except LinkRefused:
        return _link_refused(request)
    return web.start_session(web.see_other(HOME), request, signed)


@web.requires_sign_in
async def sign_out(request: Request, signed: SignedIn) -> Response:
    try:
        await read_form(request, signed.csrf)
    except BadFormError:
        return _refused_form(request)
    await web.accounts(request).sessions.sign_out(signed)
    return web.end_session(web.see_other(SIGN_IN), request)


@web.requires_sign_in
async def password_form(request: Request, signed: SignedIn) -> Response:
    return _change_page(request, signed)


def _change_page(
    request: Request, signed: SignedIn, *, error: str | None = None, status: int = 200
) -> Response:
    context = {"csrf": signed.csrf, "email": signed.user.email, "error": error}
    return web.page(request, "password.html", context, status=status)


@web.requires_sign_in
async def change_password(request: Request, signed: SignedIn) -> Response:
    """Every other session of the user ends; this browser goes on under a new cookie."""
    try:
        form = await read_form(request, signed.csrf)
    except BadFormError:
        return _refused_form(request)
    new = text(form, "new_password")
    if new != text(form, "confirm"):
        return _change_page(request, signed, error="The new passwords differ.", status=422)
    try:
        renewed = await web.accounts(request).sessions.change_password(
            signed, text(form, "current_password"), new
        )
    except AdminError as error:
        label = "Current password" if error.field == "current_password" else "New password"
        return _change_page(request, signed, error=f"{label}: {error}.", status=422)
    except SignInRefused:
        return web.end_session(web.see_other(SIGN_IN), request)
    said = "Password changed: every other session of yours has ended."
    return web.start_session(await tell(request, renewed, HOME, said), request, renewed)
