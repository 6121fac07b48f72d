"""Settings, members: every member of the user's workspaces; owners invite (the same
answer whoever the address is: an invitation is accepted by its invitee), see, resend and
revoke pending invitations, change a member's role and remove members, whose sessions
end at once; anyone leaves a workspace that keeps an owner. An invitation or a resend
leads (post, redirect, get) to the members page, which says once what was sent: a reload
sends nothing again."""

from __future__ import annotations

import json
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import Response

from intake.domain.users import Role
from intake.entrypoints.http.dashboard import web
from intake.entrypoints.http.dashboard.forms import BadFormError, read_form, text
from intake.entrypoints.http.dashboard.told import tell
from intake.service.accounts import NotAllowed, Sent, SignedIn, TooManyInvitations
from intake.service.admin import AdminError, NotFoundError

PATH = web.PREFIX + "/settings/members"
MEMBERS_PER_PAGE = 50
_NOTE = "invitation sent"  # what an invitation or a resend keeps for the page it leads to


@web.requires_sign_in
async def members_page(request: Request, signed: SignedIn) -> Response:
    """Each workspace's first page of members; `?workspace=ID&cursor=C`, one workspace's
    page after C."""
    wanted = request.query_params.get("workspace", "")
    if wanted and signed.role_in(wanted) is None:
        return web.page(request, "not_found.html", {}, status=404)
    cursor = request.query_params.get("cursor") or None
    sent = await _sent(request, signed, request.query_params.get("sent", ""))
    return await _page(request, signed, only=wanted or None, cursor=cursor, sent=sent)


async def _to_sent(request: Request, signed: SignedIn, sent: Sent) -> Response:
    """Post, redirect, get: what was sent waits for the page, for this session alone;
    the page's address names only the invitation (its id, shown on the page anyway)."""
    invitation_id = sent.invitation.invitation_id
    told = json.dumps({"mailed": sent.mailed, "mail_set_up": sent.mail_set_up})
    await web.accounts(request).notes.keep_secret(signed, _NOTE, invitation_id, told)
    return web.see_other(f"{PATH}?{urlencode({'sent': invitation_id})}")


async def _sent(request: Request, signed: SignedIn, invitation_id: str) -> Sent | None:
    """What the post that led here sent, once; None on a reload, Back or Forward, or
    when the invitation was revoked or answered meanwhile."""
    if not invitation_id:
        return None
    accounts = web.accounts(request)
    told = await accounts.notes.take_secret(signed, _NOTE, invitation_id)
    if told is None:
        return None
    try:
        invitation = await accounts.invitations.owned(signed, invitation_id)
    except (NotFoundError, NotAllowed):
        return None
    shown = json.loads(told)
    mailed, mail_set_up = shown["mailed"] is True, shown["mail_set_up"] is True
    return Sent(invitation, mailed=mailed, mail_set_up=mail_set_up)


async def _page(
    request: Request,
    signed: SignedIn,
    *,
    only: str | None = None,
    cursor: str | None = None,
    sent: Sent | None = None,
    error: str | None = None,
    status: int = 200,
) -> Response:
    accounts = web.accounts(request)
    services = web.runtime(request).services
    workspaces = []
    for membership in signed.memberships:
        workspace_id = membership.workspace_id
        if only is not None and workspace_id != only:
            continue
        try:
            page = await accounts.users.member_page(signed, workspace_id, MEMBERS_PER_PAGE, cursor)
        except AdminError:  # a cursor this page did not make: the first page, saying so
            page = await accounts.users.member_page(signed, workspace_id, MEMBERS_PER_PAGE, None)
            error, status = "That page of members is not one this list gave.", 422
        next_url = None
        if page.next_cursor is not None:
            next_url = (
                f"{PATH}?{urlencode({'workspace': workspace_id, 'cursor': page.next_cursor})}"
            )
        owner = signed.configures(workspace_id)
        invitations = await accounts.invitations.of_workspace(signed, workspace_id) if owner else []
        workspaces.append(
            {
                "workspace": await services.workspaces.get(workspace_id),
                "owner": owner,
                "members": page.items,
                "invitations": invitations,
                "next_url": next_url,
            }
        )
    context = {
        "csrf": signed.csrf,
        "email": signed.user.email,
        "me": signed.user.user_id,
        "workspaces": workspaces,
        "roles": [role.value for role in Role],
        "sent": sent,
        "now": web.runtime(request).clock.now(),
        "paged": only is not None,
        "error": error,
    }
    return web.page(request, "members.html", context, status=status)


@web.requires_sign_in
async def invite(request: Request, signed: SignedIn) -> Response:
    try:
        form = await read_form(request, signed.csrf)
        role = Role(text(form, "role") or Role.MEMBER.value)
        workspace_id = signed.require_owner(text(form, "workspace"))
        await web.runtime(request).services.workspaces.acting(workspace_id)  # mails nothing
        sent = await web.accounts(request).invitations.invite(
            signed, workspace_id, text(form, "email"), role
        )
    except (BadFormError, NotAllowed):
        return web.page(request, "refused.html", {}, status=403)
    except NotFoundError:
        return web.page(request, "not_found.html", {}, status=404)
    except (AdminError, ValueError) as error:
        message = f"Email: {error}." if isinstance(error, AdminError) else "Unknown role."
        return await _page(request, signed, error=message, status=422)
    except TooManyInvitations as refused:
        return await _too_many(request, signed, refused)
    return await _to_sent(request, signed, sent)


async def _too_many(request: Request, signed: SignedIn, refused: TooManyInvitations) -> Response:
    wait = web.wait_words(refused.retry_after)
    message = f"Too many invitations from this workspace in the last hour: try again in {wait}."
    response = await _page(request, signed, error=message, status=429)
    return web.throttled(response, refused.retry_after)


@web.requires_sign_in
async def resend(request: Request, signed: SignedIn) -> Response:
    """A pending invitation made anew: a new link (mailed), 7 more days."""
    try:
        form = await read_form(request, signed.csrf)
        accounts = web.accounts(request)
        found = await accounts.invitations.owned(signed, text(form, "invitation"))
        await web.runtime(request).services.workspaces.acting(found.workspace_id)  # mails nothing
        sent = await accounts.invitations.resend(signed, found.invitation_id)
    except (BadFormError, NotAllowed):
        return web.page(request, "refused.html", {}, status=403)
    except NotFoundError:
        return web.page(request, "not_found.html", {}, status=404)
    except TooManyInvitations as refused:
        return await _too_many(request, signed, refused)
    return await _to_sent(request, signed, sent)


@web.requires_sign_in
async def revoke(request: Request, signed: SignedIn) -> Response:
    try:
        form = await read_form(request, signed.csrf)
        await web.accounts(request).invitations.revoke(signed, text(form, "invitation"))
    except (BadFormError, NotAllowed):
        return web.page(request, "refused.html", {}, status=403)
    except NotFoundError:
        return web.page(request, "not_found.html", {}, status=404)
    return await tell(request, signed, PATH, "Invitation revoked: its link works no more.")


@web.requires_sign_in
async def leave(request: Request, signed: SignedIn) -> Response:
    """The signed-in user leaves a workspace; its last owner cannot."""
    try:
        form = await read_form(request, signed.csrf)
        await web.accounts(request).users.leave(signed, text(form, "workspace"))
    except BadFormError:
        return web.page(request, "refused.html", {}, status=403)
    except NotFoundError:
        return web.page(request, "not_found.html", {}, status=404)
    except AdminError as error:
        return await _page(request, signed, error=f"{error}.", status=422)
    return await tell(request, signed, web.PREFIX, "You left the workspace.")


@web.requires_sign_in
async def remove(request: Request, signed: SignedIn) -> Response:
    try:
        form = await read_form(request, signed.csrf)
        await web.accounts(request).users.remove_member(
            signed, text(form, "workspace"), text(form, "user")
        )
    except (BadFormError, NotAllowed):
        return web.page(request, "refused.html", {}, status=403)
    except NotFoundError:
        return web.page(request, "not_found.html", {}, status=404)
    except AdminError as error:
        return await _page(request, signed, error=f"{error}.", status=422)
    return await tell(request, signed, PATH, "Member removed: they are signed out.")


@web.requires_sign_in
async def change_role(request: Request, signed: SignedIn) -> Response:
    try:
        form = await read_form(request, signed.csrf)
        role = Role(text(form, "role"))
        await web.accounts(request).users.change_role(
            signed, text(form, "workspace"), text(form, "user"), role
        )
    except (BadFormError, NotAllowed):
        return web.page(request, "refused.html", {}, status=403)
    except NotFoundError:
        return web.page(request, "not_found.html", {}, status=404)
    except (AdminError, ValueError) as error:
        message = f"{error}." if isinstance(error, AdminError) else "Unknown role."
        return await _page(request, signed, error=message, status=422)
    return await tell(request, signed, PATH, f"Role changed: now {role.value}.")
