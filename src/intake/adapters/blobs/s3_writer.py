"""Streaming one blob into an S3 bucket: one PutObject for a small write, a multipart
upload staged under `.incoming/` and copied into place for a larger one."""

from __future__ import annotations

import builtins
import logging
import secrets
from datetime import UTC
from typing import TYPE_CHECKING, cast

import anyio
from botocore.exceptions import BotoCoreError, ClientError

from intake.adapters.blobs.common import WriterBase
from intake.ports.blobs import INCOMING_PREFIX, BlobInfo

if TYPE_CHECKING:
    from mypy_boto3_s3.type_defs import CompletedPartTypeDef

    from intake.adapters.blobs.s3 import S3BlobStore

STAMP = "%Y%m%dT%H%M%SZ"  # in the key of an unfinished write: when it began

# The store's logger: the writer's records keep the name they have always had.
_log = logging.getLogger("intake.adapters.blobs.s3")


def _body(data: bytearray) -> bytes:
    # botocore takes a bytearray as it is (its validator lists the type; the stubs do not):
    # no copy, so a part is held in memory once.
    return cast(bytes, data)


class S3BlobWriter(WriterBase):
    def __init__(self, store: S3BlobStore, key: str, *, content_type: str, max_size: int) -> None:
        super().__init__(key, content_type=content_type, max_size=max_size, clock=store.clock)
        self._store = store
        started = store.clock.now().astimezone(UTC).strftime(STAMP)
        self._staging = store.object_key(f"{INCOMING_PREFIX}{started}-{secrets.token_hex(16)}")
        self._buffer = bytearray()
        self._upload_id: str | None = None
        self._parts: builtins.list[CompletedPartTypeDef] = []

    @property
    def buffered(self) -> int:
        """Bytes held in memory: less than one part between writes."""
        return len(self._buffer)

    async def _accept(self, chunk: bytes) -> None:
        view = memoryview(chunk)
        while view:
            room = self._store.part_size - len(self._buffer)
            self._buffer += view[:room]
            view = view[room:]
            if len(self._buffer) == self._store.part_size:
                await self._send_part()

    async def _send_part(self) -> None:
        part, self._buffer = self._buffer, bytearray()
        if self._upload_id is None:
            # Shielded: an upload started but not recorded could not be aborted.
            with anyio.CancelScope(shield=True):
                self._upload_id = await self._store.run("upload", self._start)
        number = len(self._parts) + 1
        etag = await self._store.run("upload", self._upload_part, self._upload_id, number, part)
        self._parts.append({"ETag": etag, "PartNumber": number})

    def _start(self) -> str:
        created = self._store.client.create_multipart_upload(
            Bucket=self._store.bucket, Key=self._staging, ContentType=self._content_type
        )
        return created["UploadId"]

    def _upload_part(self, upload_id: str, number: int, part: bytearray) -> str:
        answer = self._store.client.upload_part(
            Bucket=self._store.bucket,
            Key=self._staging,
            UploadId=upload_id,
            PartNumber=number,
            Body=_body(part),
        )
        return answer["ETag"]

    async def _publish(self, info: BlobInfo) -> None:
        metadata = {"sha256": info.sha256, "created-at": info.created_at.isoformat()}
        if self._upload_id is None:
            await self._store.run("commit", self._put, metadata)
            self._buffer = bytearray()
            return
        if self._buffer:
            await self._send_part()
        await self._store.run("commit", self._complete, self._upload_id, metadata)

    def _put(self, metadata: dict[str, str]) -> None:
        self._store.client.put_object(
            Bucket=self._store.bucket,
            Key=self._store.object_key(self.key),
            Body=_body(self._buffer),
            ContentType=self._content_type,
            Metadata=metadata,
        )

    def _complete(self, upload_id: str, metadata: dict[str, str]) -> None:
        client, bucket = self._store.client, self._store.bucket
        client.complete_multipart_upload(
            Bucket=bucket,
            Key=self._staging,
            UploadId=upload_id,
            MultipartUpload={"Parts": self._parts},
        )
        client.copy_object(
            Bucket=bucket,
            Key=self._store.object_key(self.key),
            CopySource={"Bucket": bucket, "Key": self._staging},
            MetadataDirective="REPLACE",
            ContentType=self._content_type,
            Metadata=metadata,
        )
        try:
            client.delete_object(Bucket=bucket, Key=self._staging)
        except (ClientError, BotoCoreError) as error:
            # The blob is in place; the staged copy is left for the sweep of leftovers.
            _log.warning(
                "could not remove a staged upload",
                extra={"blob_key": self.key, "error": type(error).__name__},
            )

    async def _discard(self) -> None:
        self._buffer = bytearray()
        if self._upload_id is not None:
            await self._store.run("abort", self._abort, self._upload_id)

    def _abort(self, upload_id: str) -> None:
        self._store.abort_upload(self._staging, upload_id)
        # Also when the upload was completed but its copy into place failed.
        self._store.client.delete_object(Bucket=self._store.bucket, Key=self._staging)
