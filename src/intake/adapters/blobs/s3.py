"""Blobs as objects in an S3-compatible bucket (AWS S3, MinIO, Ceph, R2...), through boto3.

boto3 is synchronous: every call runs in a worker thread, at most `max_connections` at a
time per store (boto3's connection pool holds as many). Credentials come from boto3's
usual chain (the AWS_* environment variables, the shared config files, an instance
role); they are never part of the URL and never logged.

A blob is one object `<prefix><key>` whose metadata carries its SHA-256 and creation time.
A write smaller than one part (8 MiB) is kept in memory and sent with one PutObject at
commit. A larger one is streamed as a multipart upload to `<prefix>.incoming/<random>`,
one part in memory at a time; commit completes it and copies it into place with its
metadata (the hash is known only at the end, and S3 metadata cannot change after an
upload), so the blob appears whole, or not at all, under its key.
"""

from __future__ import annotations

import re
from collections.abc import AsyncGenerator, Callable, Iterator
from contextlib import contextmanager, suppress
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import anyio
import anyio.lowlevel
import anyio.to_thread
import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from intake.adapters.blobs.s3_writer import STAMP, S3BlobWriter
from intake.adapters.system import SystemClock
from intake.ports.blobs import (
    DEFAULT_CHUNK_SIZE,
    INCOMING_PREFIX,
    BlobInfo,
    BlobNotFound,
    BlobStoreError,
    BlobStoreUnavailable,
    validate_content_type,
    validate_deletable_key,
    validate_key,
    validate_max_size,
    validate_prefix,
)
from intake.ports.clock import Clock

if TYPE_CHECKING:
    from botocore.response import StreamingBody
    from mypy_boto3_s3 import S3Client
    from mypy_boto3_s3.type_defs import HeadObjectOutputTypeDef

MIB = 1024 * 1024
PART_SIZE = 8 * MIB
MIN_PART_SIZE = 5 * MIB  # S3's smallest part but the last
MAX_OBJECT_SIZE = 5 * 1024 * MIB  # the largest object one CopyObject can place
DEFAULT_CONNECT_TIMEOUT = 2.0
DEFAULT_READ_TIMEOUT = 20.0
DEFAULT_ATTEMPTS = 3  # the first try and two retries, with botocore's jittered backoff
DEFAULT_CONNECTIONS = 10

_BUCKET = re.compile(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")
_NOT_FOUND = frozenset({"404", "NoSuchKey", "NotFound"})
# Answers that say "not now" rather than "never": throttling and timeouts; and an upload
# that a sweep of leftovers aborted under a stalled writer, which the client may retry.
_TRANSIENT = frozenset(
    {"SlowDown", "Throttling", "ThrottlingException", "RequestTimeout", "NoSuchUpload"}
)

_T = TypeVar("_T")


def _error_code(error: ClientError) -> tuple[str, int]:
    code = str(error.response.get("Error", {}).get("Code", ""))
    status = int(error.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0))
    return code, status


def _not_found(error: ClientError) -> bool:
    return _error_code(error)[0] in _NOT_FOUND


@contextmanager
def _s3_errors(action: str) -> Iterator[None]:
    """The one place where boto3's errors become the port's errors."""
    try:
        yield
    except ClientError as error:
        code, status = _error_code(error)
        message = f"S3 {action}: {code or 'error'} (HTTP {status})"
        if status >= 500 or code in _TRANSIENT:
            raise BlobStoreUnavailable(message) from error
        raise BlobStoreError(message) from error
    except BotoCoreError as error:
        # Connection refused or reset, timeouts, no credentials found: the store cannot
        # be reached now. The messages name endpoints and keys, never a secret.
        raise BlobStoreUnavailable(f"S3 {action}: {error}") from error


class S3BlobStore:
    def __init__(
        self,
        bucket: str,
        prefix: str = "",
        *,
        endpoint_url: str | None = None,
        region: str | None = None,
        addressing_style: Literal["auto", "virtual", "path"] | None = None,
        session: boto3.Session | None = None,
        clock: Clock | None = None,
        part_size: int = PART_SIZE,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        read_timeout: float = DEFAULT_READ_TIMEOUT,
        max_attempts: int = DEFAULT_ATTEMPTS,
        max_connections: int = DEFAULT_CONNECTIONS,
    ) -> None:
        if not _BUCKET.fullmatch(bucket):
            raise ValueError(f"not an S3 bucket name: {bucket!r}")
        prefix = prefix.strip("/")
        validate_prefix(prefix)
        if part_size < MIN_PART_SIZE:
            raise ValueError(f"S3 parts are at least {MIN_PART_SIZE} bytes: {part_size}")
        self.bucket = bucket
        self.prefix = f"{prefix}/" if prefix else ""
        self.part_size = part_size
        self.clock: Clock = clock or SystemClock()
        config = Config(
            connect_timeout=connect_timeout,
            read_timeout=read_timeout,
            retries={"total_max_attempts": max_attempts, "mode": "standard"},
            max_pool_connections=max_connections,
            # Custom endpoints (MinIO, Ceph, a test server) rarely have per-bucket names.
            s3={"addressing_style": addressing_style or ("path" if endpoint_url else "auto")},
        )
        with _s3_errors("client"):
            self.client: S3Client = (session or boto3.Session()).client(
                "s3", endpoint_url=endpoint_url, region_name=region, config=config
            )
        self._limiter = anyio.CapacityLimiter(max_connections)

    async def run(self, action: str, function: Callable[..., _T], *args: Any) -> _T:
        """Runs a boto3 call in a worker thread, with its errors mapped."""
        with _s3_errors(action):
            return await anyio.to_thread.run_sync(function, *args, limiter=self._limiter)

    def object_key(self, key: str) -> str:
        return self.prefix + key

    # writes

    async def writer(self, key: str, *, content_type: str, max_size: int) -> S3BlobWriter:
        validate_key(key)
        validate_content_type(content_type)
        validate_max_size(max_size)
        if max_size > MAX_OBJECT_SIZE:
            raise ValueError(f"S3 blobs are at most {MAX_OBJECT_SIZE} bytes: {max_size}")
        await anyio.lowlevel.checkpoint()
        return S3BlobWriter(self, key, content_type=content_type, max_size=max_size)

    # reads

    async def read(
        self, key: str, *, chunk_size: int = DEFAULT_CHUNK_SIZE
    ) -> AsyncGenerator[bytes, None]:
        validate_key(key)
        if chunk_size < 1:
            raise ValueError(f"chunk_size must be positive: {chunk_size}")
        body = await self.run("read", self._get, self.object_key(key))
        if body is None:
            raise BlobNotFound(key)
        try:
            while chunk := await self.run("read", body.read, chunk_size):
                yield chunk
        finally:
            body.close()

    def _get(self, object_key: str) -> StreamingBody | None:
        try:
            return self.client.get_object(Bucket=self.bucket, Key=object_key)["Body"]
        except ClientError as error:
            if _not_found(error):
                return None
            raise

    async def stat(self, key: str) -> BlobInfo | None:
        validate_key(key)
        return await self.run("stat", self._head, key)

    def _head(self, key: str) -> BlobInfo | None:
        try:
            head = self.client.head_object(Bucket=self.bucket, Key=self.object_key(key))
        except ClientError as error:
            if _not_found(error):
                return None
            raise
        return _info(key, head)

    # removal and listing

    async def delete(self, key: str) -> None:
        validate_deletable_key(key)
        await self.run("delete", self._delete, self.object_key(key))

    def _delete(self, object_key: str) -> None:
        if object_key.startswith(self.prefix + INCOMING_PREFIX):
            uploads = self.client.get_paginator("list_multipart_uploads")
            for page in uploads.paginate(Bucket=self.bucket, Prefix=object_key):
                for upload in page.get("Uploads", []):
                    if upload.get("Key") == object_key and "UploadId" in upload:
                        self.abort_upload(object_key, upload["UploadId"])
        self.client.delete_object(Bucket=self.bucket, Key=object_key)

    def abort_upload(self, object_key: str, upload_id: str) -> None:
        try:
            self.client.abort_multipart_upload(
                Bucket=self.bucket, Key=object_key, UploadId=upload_id
            )
        except ClientError as error:
            if _error_code(error)[0] != "NoSuchUpload":
                raise

    async def list(
        self, prefix: str = "", *, older_than: datetime | None = None
    ) -> AsyncGenerator[BlobInfo, None]:
        validate_prefix(prefix)
        objects = iter(
            self.client.get_paginator("list_objects_v2").paginate(
                Bucket=self.bucket, Prefix=self.object_key(prefix)
            )
        )
        while page := await self.run("list", next, objects, None):
            for entry in page.get("Contents", []):
                key = entry.get("Key", "").removeprefix(self.prefix)
                if key.startswith(INCOMING_PREFIX):
                    # A completed upload whose commit did not finish placing it.
                    started = _started_at(key, entry.get("LastModified"))
                    if older_than is not None and started < older_than:
                        yield _leftover(key, entry.get("Size", 0), started)
                    continue
                try:
                    validate_key(key)
                except ValueError:
                    continue  # an object this store did not write
                # Listings carry no metadata: the hash and content type need a HEAD.
                info = await self.run("list", self._head, key)
                if info is not None and (older_than is None or info.created_at < older_than):
                    yield info
        if older_than is None:
            return
        uploads = iter(
            self.client.get_paginator("list_multipart_uploads").paginate(
                Bucket=self.bucket, Prefix=self.object_key(INCOMING_PREFIX)
            )
        )
        while page := await self.run("list", next, uploads, None):
            for upload in page.get("Uploads", []):
                key = upload.get("Key", "").removeprefix(self.prefix)
                started = _started_at(key, upload.get("Initiated"))
                if key.startswith(prefix) and started < older_than:
                    yield _leftover(key, 0, started)

    async def ping(self) -> None:
        try:
            await self.run("ping", self._ping)
        except BlobStoreUnavailable:
            raise
        except BlobStoreError as error:
            # A missing bucket or refused credentials: no write can succeed either.
            raise BlobStoreUnavailable(str(error)) from error

    def _ping(self) -> None:
        self.client.head_bucket(Bucket=self.bucket)

    async def aclose(self) -> None:
        await self.run("close", self.client.close)


def _info(key: str, head: HeadObjectOutputTypeDef) -> BlobInfo:
    metadata = head.get("Metadata", {})
    # An object written by someone else has no creation time of ours: its own stands.
    created_at = head.get("LastModified") or datetime.now(UTC)
    with suppress(KeyError, ValueError):
        created_at = datetime.fromisoformat(metadata["created-at"])
    return BlobInfo(
        key=key,
        size=head.get("ContentLength", 0),
        sha256=metadata.get("sha256", ""),
        content_type=head.get("ContentType", ""),
        created_at=created_at.astimezone(UTC),
    )


def _started_at(key: str, server_time: datetime | None) -> datetime:
    """When an unfinished write began: stamped in its key by the writer, so that the
    sweep goes by the service's clock (some S3-compatible servers report no real
    `Initiated` time for an upload)."""
    stamp = key.removeprefix(INCOMING_PREFIX).partition("-")[0]
    try:
        return datetime.strptime(stamp, STAMP).replace(tzinfo=UTC)
    except ValueError:
        return server_time or datetime.now(UTC)


def _leftover(key: str, size: int, when: datetime) -> BlobInfo:
    return BlobInfo(key=key, size=size, sha256="", content_type="", created_at=when.astimezone(UTC))
