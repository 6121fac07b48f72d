"""Payload limits (spec part 8, decisions.md "Payload"). KB means 1024 bytes."""

from __future__ import annotations

from attrs import frozen

KIB = 1024
MIB = 1024 * KIB
MULTIPART_HEADROOM = 256 * KIB
# Seconds a client has to send a multipart body to a form that takes files.
DEFAULT_UPLOAD_TIMEOUT = 300.0


@frozen
class PayloadLimits:
    max_body: int = 256 * KIB
    max_fields: int = 100
    max_name: int = 128
    max_value: int = 20 * KIB
    max_total: int = 200 * KIB
    max_depth: int = 3
    # A multipart body may also carry file parts, which the body limit does not count;
    # this caps the whole request so that an endless file part cannot tie up a worker.
    max_multipart_body: int = 256 * KIB + 25 * MIB

    def upload_body_ceiling(self, max_upload_total: int) -> int:
        """A multipart body to a form that takes files: the text, the files, and room
        for the parts' headers and boundaries."""
        return self.max_body + max_upload_total + MULTIPART_HEADROOM
