"""intake.js, the browser client (src/intake/browser/, its npm package folder), served
at an address named by its content, so that a page may cache it for good and pin it
with Subresource Integrity (docs/browsers.md "With intake.js").

`/static/intake.<digest>.js` and `.css` are immutable; `/intake.js` and `/intake.css`
always give the current file, cached briefly. Other sites load the module, which a
browser fetches with CORS: every answer allows any origin, as nothing in it is private.
"""

from __future__ import annotations

import base64
import functools
import hashlib
from pathlib import Path

from attrs import frozen
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

CLIENT_FOLDER = Path(__file__).resolve().parents[2] / "browser"
DIGEST_LENGTH = 16  # hex characters of the SHA-256 in the address
IMMUTABLE = "public, max-age=31536000, immutable"
SHORT = "public, max-age=300"
_MEDIA_TYPES = {"js": "text/javascript; charset=utf-8", "css": "text/css; charset=utf-8"}


@frozen
class ClientAsset:
    """One file of the client as served: its bytes, address and integrity value."""

    kind: str  # "js" or "css"
    body: bytes

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.body).hexdigest()[:DIGEST_LENGTH]

    @property
    def path(self) -> str:
        return f"/static/intake.{self.digest}.{self.kind}"

    @property
    def integrity(self) -> str:
        """The `integrity` attribute's value (SRI, sha384)."""
        return "sha384-" + base64.b64encode(hashlib.sha384(self.body).digest()).decode("ascii")


@functools.cache
def client_asset(kind: str) -> ClientAsset:
    """Read once per process: the package's files do not change while it serves."""
    return ClientAsset(kind=kind, body=(CLIENT_FOLDER / f"intake.{kind}").read_bytes())


def _answer(asset: ClientAsset, cache: str) -> Response:
    return Response(
        asset.body,
        media_type=_MEDIA_TYPES[asset.kind],
        headers={
            "Cache-Control": cache,
            "Access-Control-Allow-Origin": "*",
            "Cross-Origin-Resource-Policy": "cross-origin",
            "X-Content-Type-Options": "nosniff",
        },
    )


async def hashed(request: Request) -> Response:
    """The file at its content's address; any other digest is an unknown path (a page
    pinned to an older file fails its integrity check either way)."""
    kind = request.path_params["kind"]
    if kind not in _MEDIA_TYPES:
        raise HTTPException(404)
    asset = client_asset(kind)
    if request.path_params["digest"] != asset.digest:
        raise HTTPException(404)
    return _answer(asset, IMMUTABLE)


async def current_script(request: Request) -> Response:
    return _answer(client_asset("js"), SHORT)


async def current_stylesheet(request: Request) -> Response:
    return _answer(client_asset("css"), SHORT)


def routes() -> list[Route]:
    return [
        Route("/static/intake.{digest}.{kind}", hashed, methods=["GET"]),
        Route("/intake.js", current_script, methods=["GET"]),
        Route("/intake.css", current_stylesheet, methods=["GET"]),
    ]
