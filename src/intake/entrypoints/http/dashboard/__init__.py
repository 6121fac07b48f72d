"""The dashboard under /dashboard: server-rendered pages for workspace users
(docs/dashboard.md). `routes()` is what the application mounts."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from intake.entrypoints.http.dashboard import (
    bulk,
    consent,
    erasure,
    form_chat,
    form_lifecycle,
    form_mail,
    form_settings,
    form_settings_messages,
    form_webhooks,
    home,
    inbox,
    invitations,
    members,
    pages,
    settings,
    static_files,
    stylesheet,
    submission,
    web,
)
from intake.entrypoints.http.dashboard.web import PREFIX


def is_dashboard_path(path: str) -> bool:
    return path == PREFIX or path.startswith(PREFIX + "/")


def unknown_address(request: Request, status: int, headers: dict[str, str]) -> Response:
    """A dashboard address with no page (mistyped, stale, or a post-only one opened): the
    dashboard's own "Not found", with the refusal's status and headers (405's `Allow`)."""
    response = web.page(request, "not_found.html", {}, status=status)
    response.headers.update(headers)
    return response


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
        Route(consent.PATH, consent.consent_form, methods=["GET"]),
        Route(consent.PATH, consent.answer, methods=["POST"]),
        Route(members.PATH, members.members_page, methods=["GET"]),
        Route(members.PATH + "/invite", members.invite, methods=["POST"]),
        Route(members.PATH + "/remove", members.remove, methods=["POST"]),
        Route(members.PATH + "/role", members.change_role, methods=["POST"]),
        Route(members.PATH + "/leave", members.leave, methods=["POST"]),
        Route(members.PATH + "/invitations/resend", members.resend, methods=["POST"]),
        Route(members.PATH + "/invitations/revoke", members.revoke, methods=["POST"]),
        Route(invitations.PATH + "/accept", invitations.accept, methods=["POST"]),
        Route(invitations.PATH + "/decline", invitations.decline, methods=["POST"]),
        Route(invitations.PATH + "/{token}", invitations.link_page, methods=["GET"]),
        Route(invitations.PATH + "/{token}", invitations.join, methods=["POST"]),
        Route(settings.PATH, settings.settings_page, methods=["GET"]),
        Route(settings.PATH + "/keys", settings.create_key, methods=["POST"]),
        Route(settings.PATH + "/keys/revoke", settings.revoke_key, methods=["POST"]),
        Route(erasure.PATH, erasure.erase, methods=["POST"]),
        Route(erasure.PATH, erasure.receipt_page, methods=["GET"]),
        Route(submission.PATH, submission.submission_page, methods=["GET"]),
        Route(submission.PATH + "/json", submission.submission_json, methods=["GET"]),
        Route(submission.PATH + "/retry", submission.retry, methods=["POST"]),
        Route(submission.PATH + "/release", submission.release, methods=["POST"]),
        Route(submission.PATH + "/spam", submission.mark_spam, methods=["POST"]),
        Route(submission.PATH + "/delete", submission.delete_form, methods=["GET"]),
        Route(submission.PATH + "/delete", submission.delete, methods=["POST"]),
        Route(form_lifecycle.NEW_FORM, form_lifecycle.create, methods=["POST"]),
        Route(inbox.FORMS + "/{form_id}", inbox.inbox_page, methods=["GET"]),
        Route(inbox.FORMS + "/{form_id}/export", inbox.export, methods=["GET"]),
        Route(inbox.FORMS + "/{form_id}/bulk", bulk.bulk, methods=["POST"]),
        Route(form_settings.PATH, form_settings.settings_page, methods=["GET"]),
        Route(form_settings.PATH, form_settings.save, methods=["POST"]),
        Route(form_settings.PATH + "/pause", form_settings.pause, methods=["POST"]),
        Route(form_settings.PATH + "/resume", form_settings.resume, methods=["POST"]),
        Route(form_settings.PATH + "/rotate-key", form_settings.rotate_form, methods=["GET"]),
        Route(form_settings.PATH + "/rotate-key", form_settings.rotate, methods=["POST"]),
        Route(form_settings.PATH + "/duplicate", form_lifecycle.duplicate, methods=["POST"]),
        Route(form_settings.PATH + "/delete", form_lifecycle.delete_page, methods=["GET"]),
        Route(form_settings.PATH + "/delete", form_lifecycle.delete, methods=["POST"]),
        Route(form_settings_messages.PATH, form_settings_messages.messages_page, methods=["GET"]),
        Route(form_settings_messages.PATH, form_settings_messages.save, methods=["POST"]),
        Route(
            form_settings_messages.PATH + "/preview",
            form_settings_messages.preview,
            methods=["POST"],
        ),
        Route(form_chat.PATH, form_chat.chat_page, methods=["GET"]),
        Route(form_chat.PATH, form_chat.add, methods=["POST"]),
        Route(form_chat.PATH + "/remove", form_chat.remove, methods=["POST"]),
        Route(form_chat.PATH + "/test", form_chat.send_test, methods=["POST"]),
        Route(form_mail.PATH, form_mail.mail_page, methods=["GET"]),
        Route(form_mail.PATH, form_mail.add, methods=["POST"]),
        Route(form_mail.PATH + "/remove", form_mail.remove, methods=["POST"]),
        Route(form_mail.PATH + "/test", form_mail.send_test, methods=["POST"]),
        Route(form_mail.PATH + "/retry", form_mail.retry_test, methods=["POST"]),
        Route(form_webhooks.PATH, form_webhooks.webhooks_page, methods=["GET"]),
        Route(form_webhooks.PATH, form_webhooks.add, methods=["POST"]),
        Route(form_webhooks.PATH + "/remove", form_webhooks.remove, methods=["POST"]),
        Route(form_webhooks.ENDPOINT, form_webhooks.endpoint_page, methods=["GET"]),
        Route(form_webhooks.ENDPOINT + "/test", form_webhooks.send_test, methods=["POST"]),
        Route(form_webhooks.ENDPOINT + "/retry", form_webhooks.retry, methods=["POST"]),
        Route(form_webhooks.ENDPOINT + "/retry-dead", form_webhooks.retry_dead, methods=["POST"]),
        *stylesheet.routes(),
        *static_files.routes(),
    ]
