"""Signed, time-limited download links for uploaded files.

A link names a submission's file by position and carries its expiry and an HMAC-SHA256
of both, under a secret every process of a deployment shares (kept in the database, or
INTAKE_DOWNLOAD_SECRET). Whoever holds the link may download the file until it expires;
nobody can make one without the secret, or stretch one's expiry.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from datetime import UTC, datetime, timedelta
from urllib.parse import quote

from attrs import field, frozen

DEFAULT_LINK_TTL = timedelta(days=7)
MIN_SECRET_BYTES = 32
DOWNLOAD_PATH = "/v1/files/{submission_id}/{index}"


def _mac(secret: bytes, submission_id: str, index: int, expires: int) -> str:
    message = f"intake-download-v1\n{submission_id}\n{index}\n{expires}".encode()
    digest = hmac.new(secret, message, hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


@frozen
class DownloadLink:
    url: str
    expires_at: datetime


@frozen
class DownloadSigner:
    secret: bytes = field(repr=False)
    base_url: str  # where the service is reached, with no trailing slash
    ttl: timedelta = DEFAULT_LINK_TTL

    def __attrs_post_init__(self) -> None:
        if len(self.secret) < MIN_SECRET_BYTES:
            raise ValueError(f"a download secret has at least {MIN_SECRET_BYTES} bytes")
        if self.ttl <= timedelta(0):
            raise ValueError("the download link lifetime must be positive")

    def signing_secret(self) -> bytes:
        """The secret links are made and checked with: this signer's own. A signer that
        stands in until its secret is read overrides this alone."""
        return self.secret

    def link(self, submission_id: str, index: int, now: datetime) -> DownloadLink:
        secret = self.signing_secret()
        expires = int((now + self.ttl).timestamp())
        path = DOWNLOAD_PATH.format(submission_id=quote(submission_id, safe=""), index=index)
        signature = _mac(secret, submission_id, index, expires)
        return DownloadLink(
            url=f"{self.base_url.rstrip('/')}{path}?expires={expires}&signature={signature}",
            expires_at=datetime.fromtimestamp(expires, UTC),
        )

    def verify(
        self,
        submission_id: str,
        index: int,
        expires: str | None,
        signature: str | None,
        now: datetime,
    ) -> bool:
        """Whether a link's query is genuine and has not expired."""
        secret = self.signing_secret()
        if not expires or not signature or not (expires.isascii() and expires.isdigit()):
            return False
        if len(expires) > 12 or int(expires) <= now.timestamp():
            return False
        expected = _mac(secret, submission_id, index, int(expires))
        return hmac.compare_digest(expected.encode(), signature.encode("utf-8", "replace"))
