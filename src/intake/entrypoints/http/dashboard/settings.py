"""Settings: a workspace's API keys (owners create and revoke them; a new key is shown
on the answer page once, never again), its plan with this month's usage, and what its
spam filter knows."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import Response

from intake.domain.model import Scope
from intake.entrypoints.http.dashboard import web
from intake.entrypoints.http.dashboard.forms import BadFormError, read_form, text
from intake.entrypoints.http.dashboard.told import tell
from intake.presentation.spam import spam_summary_view
from intake.presentation.views import key_view, usage_view
from intake.service.accounts import NotAllowed, SignedIn
from intake.service.admin import AdminError, NotFoundError
from intake.service.admin.keys import CreatedKey

PATH = web.PREFIX + "/settings"
KEYS_PER_PAGE = 25
_NOTE = "api key"  # what a key's creation keeps for the page it leads to


def _chosen_workspace(signed: SignedIn, wanted: str) -> str:
    """The workspace asked for (one of the user's), else the user's first."""
    ids = [membership.workspace_id for membership in signed.memberships]
    if wanted:
        if wanted not in ids:
            raise NotFoundError("not a workspace of this user")
        return wanted
    if not ids:
        raise NotFoundError("no workspace")
    return ids[0]


def _bar(used: int, ceiling: int, limit: int) -> dict[str, int]:
    """Widths in percent of the ceiling, for the SVG's attributes (no inline style)."""

    def share(count: int) -> int:
        if ceiling <= 0:
            return 100 if count > 0 else 0
        return max(0, min(100, round(count * 100 / ceiling)))

    return {"used": share(used), "limit": share(limit)}


@web.requires_sign_in
async def settings_page(request: Request, signed: SignedIn) -> Response:
    try:
        workspace_id = _chosen_workspace(signed, request.query_params.get("workspace", ""))
    except NotFoundError:
        return web.page(request, "not_found.html", {}, status=404)
    cursor = request.query_params.get("cursor") or None
    created_id = request.query_params.get("created")
    if not created_id or not signed.configures(workspace_id):
        return await _page(request, signed, workspace_id, cursor=cursor)
    # The page a key's creation leads to: the key, once; a reload finds it taken.
    try:
        key = await web.runtime(request).services.keys.owned(workspace_id, created_id)
    except NotFoundError:
        return web.page(request, "not_found.html", {}, status=404)
    secret = await web.accounts(request).notes.take_secret(signed, _NOTE, key.key_id)
    created = None if secret is None else CreatedKey(key, secret)
    return await _page(request, signed, workspace_id, created=created, shown_before=not created)


async def _page(
    request: Request,
    signed: SignedIn,
    workspace_id: str,
    *,
    cursor: str | None = None,
    created: CreatedKey | None = None,
    confirm: dict[str, object] | None = None,
    error: str | None = None,
    shown_before: bool = False,
    status: int = 200,
) -> Response:
    services = web.runtime(request).services
    try:
        keys = await services.keys.page(workspace_id, KEYS_PER_PAGE, cursor)
    except AdminError:  # a cursor this page did not make: the first page, saying so
        keys = await services.keys.page(workspace_id, KEYS_PER_PAGE, None)
        error, status = "That page of keys is not one this list gave; showing the first.", 422
    next_url = None
    if keys.next_cursor is not None:
        query = urlencode({"workspace": workspace_id, "cursor": keys.next_cursor})
        next_url = f"{PATH}?{query}#keys-title"
    usage = await services.workspaces.usage(workspace_id)
    names = {form.form_id: form.name for form in await services.forms.all(workspace_id)}
    context: dict[str, Any] = {
        "csrf": signed.csrf,
        "email": signed.user.email,
        "workspace": await services.workspaces.get(workspace_id),
        "workspaces": [
            await services.workspaces.get(membership.workspace_id)
            for membership in signed.memberships
        ],
        "owner": signed.configures(workspace_id),
        "keys": [key_view(key) for key in keys.items],
        "keys_next": next_url,
        "keys_paged": cursor is not None,
        "scopes": [scope.value for scope in Scope],
        "usage": usage_view(usage),
        "bar": _bar(usage.used, usage.ceiling, usage.limit),
        "form_names": names,
        "spam": spam_summary_view(workspace_id, await services.spam.summary(workspace_id)),
        "settle_days": web.runtime(request).settings.spam_settle_days,
        "created": key_view(created.key) | {"api_key": created.secret} if created else None,
        "shown_before": shown_before,
        "confirm": confirm,
        "error": error,
    }
    return web.page(request, "settings.html", context, status=status)


@web.requires_sign_in
async def create_key(request: Request, signed: SignedIn) -> Response:
    try:
        form = await read_form(request, signed.csrf)
        workspace_id = signed.require_owner(text(form, "workspace"))
        chosen = {value for value in form.getlist("scopes") if isinstance(value, str)}
        scopes = frozenset(scope for scope in Scope if scope.value in chosen)
        if chosen - {scope.value for scope in scopes}:
            raise AdminError("unknown scope", field="scopes")
        services = web.runtime(request).services
        await services.workspaces.acting(workspace_id)  # revoking stays open: it only takes away
        created = await services.keys.create(workspace_id, scopes)
    except (BadFormError, NotAllowed):
        return web.page(request, "refused.html", {}, status=403)
    except NotFoundError:
        return web.page(request, "not_found.html", {}, status=404)
    except AdminError as error:
        message = f"Scopes: {error}."
        return await _page(request, signed, workspace_id, error=message, status=422)
    # Post, redirect, get: the key waits for the page, kept for this session alone, in no
    # URL, a log or a later page (no-store); a reload of that page makes no second key.
    await web.accounts(request).notes.keep_secret(signed, _NOTE, created.key.key_id, created.secret)
    query = urlencode({"workspace": workspace_id, "created": created.key.key_id})
    return web.see_other(f"{PATH}?{query}")


@web.requires_sign_in
async def revoke_key(request: Request, signed: SignedIn) -> Response:
    """A first post asks for confirmation; the second, with `confirm`, revokes."""
    try:
        form = await read_form(request, signed.csrf)
        workspace_id = signed.require_owner(text(form, "workspace"))
        services = web.runtime(request).services
        key = await services.keys.owned(workspace_id, text(form, "key"))
        if text(form, "confirm") != "yes":
            return await _page(request, signed, workspace_id, confirm=key_view(key))
        if not key.revoked:
            await services.keys.revoke(key.key_id)
    except (BadFormError, NotAllowed):
        return web.page(request, "refused.html", {}, status=403)
    except NotFoundError:
        return web.page(request, "not_found.html", {}, status=404)
    said = f"Key {key.prefix}… revoked: it is refused from now on."
    return await tell(request, signed, f"{PATH}?{urlencode({'workspace': workspace_id})}", said)
