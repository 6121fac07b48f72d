"""Invitations from the invitee's side: accept or decline one listed on the Forms page
(signed in as the invited address), and the link an invitation mails, which leads a
signed-in invitee there, asks someone with an account to sign in, and lets an address
with no account make one (choosing its password) and join at once."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from intake.entrypoints.http.dashboard import web
from intake.entrypoints.http.dashboard.forms import BadFormError, read_form, text
from intake.entrypoints.http.dashboard.told import tell
from intake.service.accounts import (
    AccountExists,
    LinkedInvitation,
    LinkRefused,
    SignedIn,
)
from intake.service.admin import AdminError, NotFoundError

PATH = web.PREFIX + "/invitations"
HOME = web.PREFIX


@web.requires_sign_in
async def accept(request: Request, signed: SignedIn) -> Response:
    return await _answer(request, signed, accepting=True)


@web.requires_sign_in
async def decline(request: Request, signed: SignedIn) -> Response:
    return await _answer(request, signed, accepting=False)


async def _answer(request: Request, signed: SignedIn, *, accepting: bool) -> Response:
    accounts = web.accounts(request)
    try:
        form = await read_form(request, signed.csrf)
        invitation_id = text(form, "invitation")
        if accepting:
            await accounts.invitations.accept(signed, invitation_id)
        else:
            await accounts.invitations.decline(signed, invitation_id)
    except BadFormError:
        return web.page(request, "refused.html", {}, status=403)
    except NotFoundError:
        return web.page(request, "not_found.html", {}, status=404)
    said = (
        "Invitation accepted: the workspace's forms are below."
        if accepting
        else "Invitation declined."
    )
    return await tell(request, signed, HOME, said)


def _refused(request: Request) -> Response:
    return web.page(request, "invitation_refused.html", {}, status=410)


def _link_page(
    request: Request,
    token: str,
    linked: LinkedInvitation,
    *,
    signed: SignedIn | None = None,
    error: str | None = None,
    status: int = 200,
) -> Response:
    csrf = web.form_token(request)
    context = {
        "csrf": csrf,
        "action": f"{PATH}/{token}",
        "offer": linked.offer,
        "has_account": linked.has_account,
        "signed_in_as": signed.user.email if signed is not None else None,
        "error": error,
    }
    response = web.page(request, "invitation.html", context, status=status)
    return web.with_form_cookie(response, request, csrf)


async def link_page(request: Request) -> Response:
    token: str = request.path_params["token"]
    try:
        linked = await web.accounts(request).invitations.by_link(token)
    except LinkRefused:
        return _refused(request)
    signed = await web.signed_in(request)
    if signed is not None and signed.user.email == linked.offer.invitation.email:
        return web.see_other(HOME)  # listed there, to accept or decline
    return _link_page(request, token, linked, signed=signed)


async def join(request: Request) -> Response:
    """A new account for the invited address, member of the workspace, signed in."""
    token: str = request.path_params["token"]
    accounts = web.accounts(request)
    try:
        form = await read_form(request, web.form_cookie(request))
    except BadFormError:
        return web.page(request, "refused.html", {}, status=403)
    try:
        linked = await accounts.invitations.by_link(token)
        password = text(form, "password")
        if password != text(form, "confirm"):
            return _link_page(request, token, linked, error="The passwords differ.", status=422)
        try:
            signed = await accounts.invitations.join_by_link(token, password)
        except AdminError as error:
            message = f"Password: {error}."
            return _link_page(request, token, linked, error=message, status=422)
        except AccountExists:
            linked = LinkedInvitation(linked.offer, has_account=True)
            return _link_page(request, token, linked, status=409)
    except LinkRefused:
        return _refused(request)
    return web.start_session(web.see_other(HOME), request, signed)
