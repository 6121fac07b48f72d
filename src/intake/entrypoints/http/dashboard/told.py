"""What a post did, said once on the page it leads to ("Marked as spam.", "3 submissions
deleted."): kept as the session's note (sealed at rest, taken on the first view), so a
reload, Back or Forward says it no more. The redirect's `told=1` says a note waits:
pages without it never look, and cost nothing. `web.requires_sign_in` takes the note
and `web.page` shows it, on every signed-in page."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from intake.entrypoints.http.dashboard import web
from intake.service.accounts import SignedIn


async def tell(request: Request, signed: SignedIn, path: str, message: str) -> Response:
    """The redirect to `path` (a query and a fragment may follow), where `message` is
    said once."""
    address, mark, fragment = path.partition("#")
    where = address.partition("?")[0]
    await web.accounts(request).notes.keep_secret(signed, web.TOLD_NOTE, where, message)
    joined = "&" if "?" in address else "?"
    return web.see_other(f"{address}{joined}{web.TOLD_FLAG}=1{mark}{fragment}")
