"""The dashboard's own static files (static/): each served at an address named by its
content, `/dashboard/static/<stem>.<digest>.<ext>`, cached for good; a new release names
new addresses, so no browser keeps an old file. Templates reach them by `static_url`."""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

from attrs import frozen
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

PREFIX = "/dashboard"  # web.PREFIX: web.py takes `static_url` from here

FOLDER = Path(__file__).parent / "static"
DIGEST_LENGTH = 16  # hex characters of the SHA-256 in the address
IMMUTABLE = "public, max-age=31536000, immutable"
MEDIA_TYPES = {
    "svg": "image/svg+xml",
    "js": "text/javascript; charset=utf-8",
}


@frozen
class StaticFile:
    name: str  # e.g. "favicon.svg"
    body: bytes

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.body).hexdigest()[:DIGEST_LENGTH]

    @property
    def url(self) -> str:
        stem, _, ext = self.name.rpartition(".")
        return f"{PREFIX}/static/{stem}.{self.digest}.{ext}"


@functools.cache
def static_file(name: str) -> StaticFile:
    """Read once per process: the package's files do not change while it serves."""
    return StaticFile(name, (FOLDER / name).read_bytes())


def static_url(name: str) -> str:
    """The address of one of the files that MEDIA_TYPES allows (a Jinja global)."""
    return static_file(name).url


async def hashed(request: Request) -> Response:
    """The file at its content's address; any other name or digest is not found."""
    stem, digest, ext = (request.path_params[key] for key in ("stem", "digest", "ext"))
    name = f"{stem}.{ext}"
    if ext not in MEDIA_TYPES or not (FOLDER / name).is_file():
        return _not_found()
    found = static_file(name)
    if digest != found.digest:
        return _not_found()
    return Response(
        found.body,
        media_type=MEDIA_TYPES[ext],
        headers={"Cache-Control": IMMUTABLE, "X-Content-Type-Options": "nosniff"},
    )


def _not_found() -> Response:
    return Response("Not found", status_code=404, media_type="text/plain")


def routes() -> list[Route]:
    return [Route(PREFIX + "/static/{stem}.{digest}.{ext}", hashed, methods=["GET"])]
