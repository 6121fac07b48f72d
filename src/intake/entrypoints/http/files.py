"""GET and HEAD /v1/files/{submission_id}/{index}: an uploaded file, by its signed link.

Finding and reading the file is the service's (service/downloads.py); this module reads
the request and writes the answer. The signature is checked before anything is looked
up, so a link that is missing, forged, made for another file or expired (401) tells
nothing about what it names. Refusals keep the error table's codes, in words about the
link and the file (DOWNLOAD_ERRORS): 404 when the submission, its file or its blob does
not exist. The blob is streamed from the store as it is read, never held whole.

The answer is a download, never a page: `Content-Disposition: attachment`, the type the
content was found to be with `nosniff`, and a sandboxing Content-Security-Policy for a
browser that would show it anyway. The link itself is a credential: it is never logged
(the access log names the route's template), and no Referer carries it further.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator
from contextlib import aclosing
from urllib.parse import quote

from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response, StreamingResponse
from starlette.types import Receive, Scope, Send

from intake.domain.errors import ErrorCode, Rejection, StorageUnavailable
from intake.domain.signing import DOWNLOAD_PATH
from intake.domain.uploads import (
    MAX_FILES_CEILING,
    UNKNOWN_TYPE,
    StoredFile,
    clean_file_name,
    is_media_type,
)
from intake.entrypoints.http.negotiation import prefers_html
from intake.entrypoints.http.rendering import error_response
from intake.serve_runtime import ServeRuntime
from intake.service.downloads import DownloadRefusal, Downloads, LinkedFile

log = logging.getLogger("intake.http")

ROUTE = DOWNLOAD_PATH
PAGE_TITLE = "Download failed"  # a browser's page of a refused link: no submission failed

# What every answer of a file carries, whatever the file holds.
FILE_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "sandbox; default-src 'none'",
    "Cache-Control": "private, no-store",
    "Referrer-Policy": "no-referrer",
}

# What RFC 8187 lets through unencoded in `filename*` (attr-char), besides letters
# and digits.
_ATTR_CHARS = "!#$&+-.^_`|~"


def _index(raw: str) -> int | None:
    """A file's position as a link writes it: digits, no leading zero, below the most
    files a form may take. Anything else names no file."""
    if not (raw.isascii() and raw.isdigit()) or (len(raw) > 1 and raw[0] == "0"):
        return None
    if len(raw) > len(str(MAX_FILES_CEILING)):
        return None
    index = int(raw)
    return index if index < MAX_FILES_CEILING else None


def content_disposition(name: str) -> str:
    """`attachment` with the file's name twice (RFC 6266): `filename*` in UTF-8 for
    the browsers that read it (all current ones), and a plain ASCII stand-in for the
    rest, from which quotes, backslashes and percent signs are left out."""
    cleaned = clean_file_name(name)
    fallback = "".join(
        ch if " " <= ch <= "~" and ch not in '"\\%' else "_" for ch in cleaned
    ).strip()
    encoded = quote(cleaned, safe=_ATTR_CHARS)
    return f"attachment; filename=\"{fallback or 'file'}\"; filename*=UTF-8''{encoded}"


def _headers(stored: StoredFile) -> dict[str, str]:
    # A stored type that is no type name (a damaged row) is served as plain bytes.
    media_type = stored.content_type if is_media_type(stored.content_type) else None
    return {
        **FILE_HEADERS,
        "Content-Type": media_type or UNKNOWN_TYPE,
        "Content-Length": str(stored.size),
        "Content-Disposition": content_disposition(stored.name),
        "ETag": f'"{stored.sha256}"',
    }


class _BlobResponse(StreamingResponse):
    """Streams a blob whose first chunk is already read. The store's reader is closed
    when the answer ends, however it ends, a client that goes away included, so that no
    open file or connection outlives the request."""

    def __init__(
        self,
        reader: AsyncGenerator[bytes, None],
        first: bytes,
        size: int,
        headers: dict[str, str],
    ) -> None:
        self._reader = reader
        self._chunks = self._stream(first, size)
        super().__init__(self._chunks, headers=headers)

    async def _stream(self, first: bytes, size: int) -> AsyncGenerator[bytes, None]:
        # Never more than the Content-Length told: a longer blob would break the
        # connection's framing.
        left = size
        chunk = first
        while True:
            if chunk:
                chunk = chunk[:left]
                left -= len(chunk)
                yield chunk
            if left <= 0:
                return
            try:
                chunk = await anext(self._reader)
            except StopAsyncIteration:
                return

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async with aclosing(self._reader), aclosing(self._chunks):
            try:
                await super().__call__(scope, receive, send)
            except ClientDisconnect:
                return  # the client stopped the download: nothing went wrong here


def _refuse(request: Request, code: ErrorCode, retry_after: int | None = None) -> Response:
    return error_response(
        Rejection.download(code, retry_after=retry_after),
        request.state.request_id,
        browser=prefers_html(request.headers.get("accept")),
        title=PAGE_TITLE,
    )


def _unavailable(request: Request) -> Response:
    return _refuse(request, ErrorCode.SERVICE_UNAVAILABLE, retry_after=1)


def _downloads(request: Request) -> Downloads:
    runtime: ServeRuntime = request.app.state.runtime
    return Downloads(runtime.signer, runtime.clock, runtime.store.submissions, runtime.blobs)


async def download(request: Request) -> Response:
    index = _index(request.path_params["index"])
    if index is None:
        return _refuse(request, ErrorCode.FORM_NOT_FOUND)
    downloads = _downloads(request)
    try:
        linked = await downloads.find(
            request.path_params["submission_id"],
            index,
            request.query_params.get("expires"),
            request.query_params.get("signature"),
        )
        if isinstance(linked, DownloadRefusal):
            return _refused(request, linked)
        request.scope.setdefault("state", {})["form_id"] = linked.form_id
        if request.method == "HEAD":
            found = await downloads.check(linked)
            if isinstance(found, DownloadRefusal):
                return _refused(request, found, linked)
            return Response(status_code=200, headers=_headers(found))
        opened = await downloads.open(linked)
    except StorageUnavailable:  # BlobStoreUnavailable among them
        return _unavailable(request)
    if isinstance(opened, DownloadRefusal):
        return _refused(request, opened, linked)
    return _BlobResponse(opened.rest, opened.first, opened.stored.size, _headers(opened.stored))


def _refused(
    request: Request, refusal: DownloadRefusal, linked: LinkedFile | None = None
) -> Response:
    if refusal is DownloadRefusal.UNSIGNED:
        return _refuse(request, ErrorCode.UNAUTHORIZED)
    if refusal is DownloadRefusal.BLOB_MISSING and linked is not None:
        # Ids only: never the link's signature.
        missing = {
            "request_id": request.state.request_id,
            "submission_id": linked.submission_id,
            "index": linked.index,
        }
        log.warning("a submission's file is missing from the blob store", extra=missing)
    return _refuse(request, ErrorCode.FORM_NOT_FOUND)
