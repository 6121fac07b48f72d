"""Blob stores, where uploaded files go: a local directory, an S3-compatible bucket, or
memory (tests and library users). `open_blob_store(url)` picks one from its URL."""

from intake.adapters.blobs.factory import open_blob_store
from intake.adapters.blobs.local import LocalBlobStore
from intake.adapters.blobs.memory import InMemoryBlobStore
from intake.adapters.blobs.s3 import S3BlobStore

__all__ = ["InMemoryBlobStore", "LocalBlobStore", "S3BlobStore", "open_blob_store"]
