"""Standard Webhooks signatures: `v1,` + base64(HMAC-SHA256(key, "{id}.{timestamp}.{body}"))
where the key is the base64 text after `whsec_` in the endpoint's secret."""

from __future__ import annotations

import base64
import hashlib
import hmac

from intake.domain.ids import WEBHOOK_SECRET_PREFIX


def signing_key(secret: str) -> bytes:
    if not secret.startswith(WEBHOOK_SECRET_PREFIX):
        raise ValueError("a webhook secret starts with whsec_")
    return base64.b64decode(secret[len(WEBHOOK_SECRET_PREFIX) :], validate=True)


def signature(secret: str, message_id: str, timestamp: int, body: bytes) -> str:
    signed = f"{message_id}.{timestamp}.".encode() + body
    digest = hmac.new(signing_key(secret), signed, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode("ascii")


def headers(secret: str, message_id: str, timestamp: int, body: bytes) -> dict[str, str]:
    return {
        "webhook-id": message_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": signature(secret, message_id, timestamp, body),
        "content-type": "application/json",
    }
