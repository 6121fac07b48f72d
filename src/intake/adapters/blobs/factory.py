"""Opening a blob store from its URL (`INTAKE_BLOB_URL`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, cast
from urllib.parse import parse_qsl, unquote, urlsplit

from intake.adapters.blobs.local import LocalBlobStore
from intake.adapters.blobs.memory import InMemoryBlobStore
from intake.ports.blobs import BlobStore
from intake.ports.clock import Clock

if TYPE_CHECKING:
    from intake.adapters.blobs.s3 import S3BlobStore

_S3_OPTIONS = frozenset({"endpoint", "region", "addressing"})
_ADDRESSING = ("auto", "virtual", "path")


def open_blob_store(url: str, *, clock: Clock | None = None) -> BlobStore:
    """`file:///absolute/path`, a plain path (relative to the working directory),
    `s3://bucket/prefix?endpoint=https://...&region=...&addressing=path`, or `memory://`
    (nothing kept past the process). Raises ValueError for anything else."""
    url = url.strip()
    if not url:
        raise ValueError("a blob store URL is empty")
    if "://" not in url:
        return LocalBlobStore(url, clock=clock)
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme == "memory":
        if parts.netloc or parts.path or parts.query:
            raise ValueError(f"memory:// takes nothing more: {url!r}")
        return InMemoryBlobStore(clock=clock)
    if scheme == "file":
        if parts.netloc not in ("", "localhost") or parts.query or parts.fragment:
            raise ValueError(f"a file URL takes a local absolute path only: {url!r}")
        path = unquote(parts.path)
        if not path.startswith("/"):
            raise ValueError(f"a file URL takes an absolute path: {url!r}")
        return LocalBlobStore(path, clock=clock)
    if scheme == "s3":
        return _open_s3(url, clock)
    raise ValueError(f"unknown blob store scheme {parts.scheme!r} (file, s3 or memory)")


def _open_s3(url: str, clock: Clock | None) -> S3BlobStore:
    # Imported here: boto3 is slow to import, and only an S3 deployment needs it.
    from intake.adapters.blobs.s3 import S3BlobStore  # noqa: PLC0415

    parts = urlsplit(url)
    if "@" in parts.netloc or parts.password is not None:
        # Kept out of the URL, which ends up in process listings and logs.
        raise ValueError("S3 credentials go in the AWS_* environment variables, not the URL")
    if parts.fragment:
        raise ValueError("an s3:// URL takes no fragment")
    options: dict[str, str] = {}
    for name, value in parse_qsl(parts.query, keep_blank_values=True, strict_parsing=False):
        if name not in _S3_OPTIONS:
            raise ValueError(f"unknown s3:// option {name!r} (endpoint, region, addressing)")
        options[name] = value
    addressing = options.get("addressing")
    if addressing is not None and addressing not in _ADDRESSING:
        raise ValueError(f"addressing is auto, virtual or path, not {addressing!r}")
    endpoint = options.get("endpoint") or None
    if endpoint is not None and urlsplit(endpoint).scheme not in ("http", "https"):
        raise ValueError(f"the S3 endpoint must be an http(s) URL: {endpoint!r}")
    return S3BlobStore(
        parts.netloc,
        unquote(parts.path),
        endpoint_url=endpoint,
        region=options.get("region") or None,
        addressing_style=cast(Literal["auto", "virtual", "path"] | None, addressing),
        clock=clock,
    )
