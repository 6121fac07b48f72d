"""CORS for the public endpoint (decisions.md "Browsers").

Every answer under /f/ echoes the request's Origin: the allow-list is enforced by the
403, not by CORS, so a page on a refused origin can still read why. No credentials are
involved, so echoing is safe. The middleware applies this to every answer, Starlette's
own and our fault fallback included, so that no refusal is left unreadable.
"""

from __future__ import annotations

PUBLIC_PREFIX = "/f/"
ALLOW_METHODS = "POST, OPTIONS"
ALLOW_HEADERS = (
    "Content-Type, Idempotency-Key, X-Challenge-Token, Accept, Accept-Language, "
    "Content-Language, X-Requested-With"
)
EXPOSE_HEADERS = "Retry-After, X-Request-ID, Idempotent-Replayed"
MAX_AGE = "600"


def is_public_path(path: str) -> bool:
    return path.startswith(PUBLIC_PREFIX)


def cors_headers(origin: str | None) -> dict[str, str]:
    """What every answer of the public endpoint carries."""
    headers = {"Vary": "Origin"}
    if origin:
        headers["Access-Control-Allow-Origin"] = origin
        headers["Access-Control-Expose-Headers"] = EXPOSE_HEADERS
    return headers


def preflight_headers(origin: str | None) -> dict[str, str]:
    """The answer to `OPTIONS /f/{key}`, whatever the origin."""
    headers = cors_headers(origin)
    headers["Access-Control-Allow-Origin"] = origin or "*"
    headers["Access-Control-Allow-Methods"] = ALLOW_METHODS
    headers["Access-Control-Allow-Headers"] = ALLOW_HEADERS
    headers["Access-Control-Max-Age"] = MAX_AGE
    return headers
