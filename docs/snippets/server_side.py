"""Submitting to intake from your own server, with httpx.

    INTAKE_URL=https://intake.example.com INTAKE_FORM_ID=... INTAKE_API_KEY=... \\
        python server_side.py ORDER_ID

The API key is a secret (`intake key create`): keep it on the server, never in a page.
Every attempt for one order sends the same Idempotency-Key, so a retry after a timeout
or a 503 can never store the order twice: intake answers a repeat with the original
result (200, `Idempotent-Replayed: true`).
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

import httpx

INTAKE_URL = os.environ.get("INTAKE_URL", "https://intake.example.com").rstrip("/")
ATTEMPTS = 3
LONGEST_WAIT = 30.0  # seconds; a longer Retry-After is left to the caller


def submit(form_id: str, api_key: str, fields: dict[str, Any], idempotency_key: str) -> Any:
    """Sends one submission and returns intake's JSON answer (success or error envelope)."""
    url = f"{INTAKE_URL}/v1/forms/{form_id}/submissions"
    headers = {"Authorization": f"Bearer {api_key}", "Idempotency-Key": idempotency_key}
    with httpx.Client(timeout=10.0) as client:
        attempt = 1
        while True:
            try:
                response = client.post(url, json=fields, headers=headers)
            except httpx.TransportError:
                if attempt == ATTEMPTS:
                    raise
                wait = float(attempt)  # no answer: safe to send again with the same key
            else:
                # 503, or 429 rate_limited: the answer says when to try again.
                retry_after = _retry_after(response)
                if retry_after is None or attempt == ATTEMPTS:
                    return response.json()
                wait = retry_after
            time.sleep(wait)
            attempt += 1


def _retry_after(response: httpx.Response) -> float | None:
    if response.status_code not in (429, 503):
        return None
    value = response.headers.get("Retry-After", "")
    if not value.isdigit() or float(value) > LONGEST_WAIT:
        return None  # quota_exceeded carries none: retrying would not help
    return float(value)


def main() -> int:
    order_id = sys.argv[1]
    answer = submit(
        form_id=os.environ["INTAKE_FORM_ID"],
        api_key=os.environ["INTAKE_API_KEY"],
        fields={
            "email": "customer@example.com",
            "message": f"Order {order_id} was placed.",
            "items": ["tea", "cups"],
            "_subject": f"Order {order_id}",
        },
        idempotency_key=f"order-{order_id}",
    )
    print(json.dumps(answer))
    if not answer["ok"]:
        # Branch on the code, show the message, log the request id.
        error = answer["error"]
        print(f"{error['code']}: {error['message']} ({answer['request_id']})", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
