"""The dashboard's one stylesheet, served from the package at an address named by its
content: a page may cache it for good, and a new release's pages name the new file.

`/dashboard/static/dashboard.<digest>.css` is immutable; `/dashboard/static/dashboard.css`
always gives the current file, cached briefly, for a page rendered before an upgrade.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

# Under the dashboard's prefix; web.py links it into every page, so this imports none of it.
STATIC = "/dashboard/static"
_FILE = Path(__file__).parent / "static" / "dashboard.css"
DIGEST_LENGTH = 16  # hex characters of the SHA-256 in the address
_IMMUTABLE = "public, max-age=31536000, immutable"
_SHORT = "public, max-age=300"


@functools.cache
def _body() -> bytes:
    """Read once per process: the package's files do not change while it serves."""
    return _FILE.read_bytes()


def digest() -> str:
    return hashlib.sha256(_body()).hexdigest()[:DIGEST_LENGTH]


def stylesheet_path() -> str:
    """Where the pages link the stylesheet: at its content's address."""
    return f"{STATIC}/dashboard.{digest()}.css"


def _answer(cache: str) -> Response:
    return Response(
        _body(),
        media_type="text/css",
        headers={"Cache-Control": cache, "X-Content-Type-Options": "nosniff"},
    )


async def hashed(request: Request) -> Response:
    """The file at its content's address; another digest is an unknown path."""
    if request.path_params["digest"] != digest():
        raise HTTPException(404)
    return _answer(_IMMUTABLE)


async def current(request: Request) -> Response:
    return _answer(_SHORT)


def routes() -> list[Route]:
    return [
        Route(STATIC + "/dashboard.{digest}.css", hashed, methods=["GET"]),
        Route(STATIC + "/dashboard.css", current, methods=["GET"]),
    ]
