"""The management API under /v1: owners' programs read, triage and configure over HTTP,
through the same owner-side services as the `intake` command (service/admin)."""

from __future__ import annotations

from starlette.routing import Route

from intake.entrypoints.http.management import (
    chat,
    erasures,
    forms,
    listing,
    notifications,
    spam,
    submission,
    triage,
    usage,
    webhooks,
)

PREFIX = "/v1"


def routes() -> list[Route]:
    return [
        *forms.ROUTES,
        *usage.ROUTES,
        *spam.ROUTES,
        *listing.ROUTES,
        *submission.ROUTES,
        *triage.ROUTES,
        *webhooks.ROUTES,
        *notifications.ROUTES,
        *chat.ROUTES,
        *erasures.ROUTES,
    ]
