"""Our Standard Webhooks signatures, checked by the specification's reference library."""

from __future__ import annotations

import json
import os
import time
from datetime import UTC, datetime

import pytest
from standardwebhooks import Webhook
from standardwebhooks.webhooks import WebhookVerificationError

from intake.domain import ids, webhooks

MESSAGE_ID = "evt_01hzx5k7w3e8q2r9t6y4u1i0op"
BODY = json.dumps(
    {"type": "submission.created", "data": {"name": "Ada", "note": "ünïcode ✓"}},
    ensure_ascii=False,
).encode("utf-8")


@pytest.fixture
def secret() -> str:
    return ids.webhook_secret(os.urandom(ids.SECRET_RANDOM_BYTES))


def test_the_reference_library_accepts_our_headers(secret: str) -> None:
    now = int(time.time())
    headers = webhooks.headers(secret, MESSAGE_ID, now, BODY)

    payload = Webhook(secret).verify(BODY, headers)

    assert payload == json.loads(BODY)
    assert headers["content-type"] == "application/json"
    assert headers["webhook-id"] == MESSAGE_ID
    assert headers["webhook-timestamp"] == str(now)


def test_our_signature_equals_the_reference_signature(secret: str) -> None:
    now = int(time.time())
    reference = Webhook(secret).sign(
        MESSAGE_ID, datetime.fromtimestamp(now, UTC), BODY.decode("utf-8")
    )

    assert webhooks.signature(secret, MESSAGE_ID, now, BODY) == reference


def test_a_changed_body_is_refused(secret: str) -> None:
    now = int(time.time())
    headers = webhooks.headers(secret, MESSAGE_ID, now, BODY)

    with pytest.raises(WebhookVerificationError):
        Webhook(secret).verify(BODY.replace(b"Ada", b"Eve"), headers)


def test_a_changed_timestamp_is_refused(secret: str) -> None:
    now = int(time.time())
    headers = webhooks.headers(secret, MESSAGE_ID, now, BODY)
    # One second later is well inside the replay window: only the signature can fail.
    headers["webhook-timestamp"] = str(now + 1)

    with pytest.raises(WebhookVerificationError, match="No matching signature"):
        Webhook(secret).verify(BODY, headers)


def test_a_changed_message_id_is_refused(secret: str) -> None:
    headers = webhooks.headers(secret, MESSAGE_ID, int(time.time()), BODY)
    headers["webhook-id"] = "evt_another"

    with pytest.raises(WebhookVerificationError):
        Webhook(secret).verify(BODY, headers)


def test_another_secret_does_not_verify(secret: str) -> None:
    headers = webhooks.headers(secret, MESSAGE_ID, int(time.time()), BODY)
    other = ids.webhook_secret(os.urandom(ids.SECRET_RANDOM_BYTES))

    with pytest.raises(WebhookVerificationError):
        Webhook(other).verify(BODY, headers)


def test_an_old_timestamp_is_refused_as_a_replay(secret: str) -> None:
    old = int(time.time()) - 3600
    headers = webhooks.headers(secret, MESSAGE_ID, old, BODY)

    with pytest.raises(WebhookVerificationError, match="too old"):
        Webhook(secret).verify(BODY, headers)


def test_webhook_secrets_are_in_the_reference_format(secret: str) -> None:
    assert secret.startswith("whsec_")
    # The reference library decodes the same key bytes as our signing does.
    assert Webhook(secret)._whsecret == webhooks.signing_key(secret)
    assert len(webhooks.signing_key(secret)) == ids.SECRET_RANDOM_BYTES
