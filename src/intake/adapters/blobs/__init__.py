"""Blob stores, where uploaded files go: a local directory, an S3-compatible bucket, or
memory (tests and library users). `open_blob_store(url)` picks one from its URL."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from intake.adapters.blobs.factory import open_blob_store
from intake.adapters.blobs.local import LocalBlobStore
from intake.adapters.blobs.memory import InMemoryBlobStore

if TYPE_CHECKING:
    from intake.adapters.blobs.s3 import S3BlobStore


def __getattr__(name: str) -> Any:
    # boto3 takes a good part of a second to import: only a deployment on S3 pays it.
    if name == "S3BlobStore":
        from intake.adapters.blobs.s3 import S3BlobStore  # noqa: PLC0415

        return S3BlobStore
    raise AttributeError(name)


__all__ = ["InMemoryBlobStore", "LocalBlobStore", "S3BlobStore", "open_blob_store"]
