"""The dashboard under /dashboard: server-rendered pages for workspace users
(docs/dashboard.md). `routes()` is what the application mounts."""

from __future__ import annotations

from pathlib import Path

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from intake.entrypoints.http.dashboard import (
    bulk,
    home,
    inbox,
    members,
    pages,
    settings,
    submission,
)
from intake.entrypoints.http.dashboard.web import PREFIX

_STYLESHEET = Path(__file__).parent / "static" / "dashboard.css"


async def stylesheet(request: Request) -> Response:
    """The one stylesheet, from the package: the policy allows nothing from elsewhere."""
    return Response(
        _STYLESHEET.read_bytes(),
        media_type="text/css",
        headers={"Cache-Control": "public, max-age=3600", "X-Content-Type-Options": "nosniff"},
    )


def routes() -> list[Route]:
    """Every route is a `Route` (no `Mount`), each with its own endpoint."""
    return [
        Route(PREFIX, home.home, methods=["GET"]),
        Route(PREFIX + "/sign-in", pages.sign_in_form, methods=["GET"]),
        Route(PREFIX + "/sign-in", pages.sign_in, methods=["POST"]),
        Route(PREFIX + "/sign-in/{token}", pages.link_form, methods=["GET"]),
        Route(PREFIX + "/sign-in/{token}", pages.use_link, methods=["POST"]),
        Route(PREFIX + "/sign-out", pages.sign_out, methods=["POST"]),
        Route(PREFIX + "/password", pages.password_form, methods=["GET"]),
        Route(PREFIX + "/password", pages.change_password, methods=["POST"]),
        Route(members.PATH, members.members_page, methods=["GET"]),
        Route(members.PATH + "/invite", members.invite, methods=["POST"]),
        Route(members.PATH + "/remove", members.remove, methods=["POST"]),
        Route(settings.PATH, settings.settings_page, methods=["GET"]),
        Route(settings.PATH + "/keys", settings.create_key, methods=["POST"]),
        Route(settings.PATH + "/keys/revoke", settings.revoke_key, methods=["POST"]),
        Route(submission.PATH, submission.submission_page, methods=["GET"]),
        Route(submission.PATH + "/release", submission.release, methods=["POST"]),
        Route(submission.PATH + "/spam", submission.mark_spam, methods=["POST"]),
        Route(submission.PATH + "/delete", submission.delete_form, methods=["GET"]),
        Route(submission.PATH + "/delete", submission.delete, methods=["POST"]),
        Route(inbox.FORMS + "/{form_id}", inbox.inbox_page, methods=["GET"]),
        Route(inbox.FORMS + "/{form_id}/export", inbox.export, methods=["GET"]),
        Route(inbox.FORMS + "/{form_id}/bulk", bulk.bulk, methods=["POST"]),
        Route(PREFIX + "/static/dashboard.css", stylesheet, methods=["GET"]),
    ]
