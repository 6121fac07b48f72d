"""The bulk prefill: a million stored submissions, as the service writes them, loaded
by COPY in batches, for the bench's figures with a full store."""

from __future__ import annotations

import base64
import os
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import parse_qsl

import psycopg

from bench.storage import Target
from intake.adapters.sql_rows import json_text
from intake.domain.client_network import client_network
from intake.domain.idempotency import Route, fingerprint, scope
from intake.domain.model import OutboxEvent, Submission, SubmissionStatus

PREFILL_BATCH = 50_000
PREFILL_SPAN = timedelta(days=30)


# Rows as the service writes them


def bench_data(body: str) -> dict[str, Any]:
    """The stored data of a submission of `body` (no control fields in it)."""
    return dict(parse_qsl(body, keep_blank_values=True))


def sample_submission(target: Target, body: str, now: datetime) -> Submission:
    data = bench_data(body)
    return Submission(
        submission_id="sub_0",
        form_id=target.form_id,
        workspace_id=target.workspace_id,
        status=SubmissionStatus.ACCEPTED,
        data=data,
        created_at=now,
        reply_to=str(data.get("email")) if data.get("email") else None,
        client_ip="198.18.0.1",
    )


_RFC4648 = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
_CROCKFORD = b"0123456789abcdefghjkmnpqrstvwxyz"
_TO_CROCKFORD = bytes.maketrans(_RFC4648, _CROCKFORD)


def fast_time_sorted_id(prefix: str, unix_ms: int, random: bytes) -> str:
    """intake.domain.ids.time_sorted_id by the C base32 codec, for a million rows. The
    value is right-aligned in whole 40-bit groups; the leading zero digits are cut."""
    shift = len(random) * 8
    chars = -(-(48 + shift) // 5)
    groups = -(-chars // 8)
    value = ((unix_ms & (2**48 - 1)) << shift) | int.from_bytes(random, "big")
    text = base64.b32encode(value.to_bytes(groups * 5, "big")).translate(_TO_CROCKFORD)
    return f"{prefix}_{text[groups * 8 - chars :].decode('ascii')}"


def _copy_text(value: object) -> str:
    """One column in COPY's text format. Nothing the prefill writes needs escaping."""
    if value is None:
        return "\\N"
    text = str(value)
    if any(ch in text for ch in "\t\n\r\\"):
        raise ValueError(f"prefill value needs COPY escaping: {text!r}")
    return text


def prefill_rows(
    target: Target, body: str, count: int, until: datetime
) -> Iterator[tuple[list[str], list[str], list[str]]]:
    """Batches of COPY lines for submissions, outbox and idempotency: `count` accepted
    submissions spread over the month before `until`, in time order, each with its
    delivered outbox event and an (expired) idempotency record."""
    data = bench_data(body)
    data_json = json_text(data)
    data_fingerprint = fingerprint(data)
    sample = sample_submission(target, body, until)
    key_scope = scope(Route.PUBLIC, target.form_id, client_network(sample.client_ip or ""))
    start_ms = int((until - PREFILL_SPAN).timestamp() * 1000)
    step_ms = max(1, int(PREFILL_SPAN.total_seconds() * 1000) // max(count, 1))
    common = "\t".join((target.form_id, target.workspace_id))
    made = 0
    while made < count:
        n = min(PREFILL_BATCH, count - made)
        randoms = os.urandom(n * 28)
        submissions: list[str] = []
        events: list[str] = []
        records: list[str] = []
        for i in range(n):
            ms = start_ms + (made + i) * step_ms
            sub_id = fast_time_sorted_id("sub", ms, randoms[i * 28 : i * 28 + 12])
            evt_id = fast_time_sorted_id("evt", ms, randoms[i * 28 + 12 : i * 28 + 28])
            created = datetime.fromtimestamp(ms / 1000, UTC)
            stamp = created.isoformat()
            submission = Submission(
                submission_id=sub_id,
                form_id=sample.form_id,
                workspace_id=sample.workspace_id,
                status=SubmissionStatus.ACCEPTED,
                data=data,
                created_at=created,
                reply_to=sample.reply_to,
                client_ip=sample.client_ip,
            )
            payload = json_text(dict(OutboxEvent.for_submission(evt_id, submission).payload))
            published = (created + timedelta(seconds=2)).isoformat()
            submissions.append(
                "\t".join(
                    (
                        sub_id,
                        common,
                        "accepted",
                        data_json,
                        "\\N",
                        _copy_text(sample.reply_to),
                        "0",
                        _copy_text(sample.client_ip),
                        stamp,
                    )
                )
            )
            events.append(
                "\t".join(
                    (
                        evt_id,
                        "submission.created",
                        sub_id,
                        common,
                        _copy_text(payload),
                        stamp,
                        published,
                        stamp,
                    )
                )
            )
            records.append(
                "\t".join((key_scope, f"bench-{sub_id}", data_fingerprint, sub_id, stamp))
            )
        made += n
        yield submissions, events, records


_COPIES = (
    "COPY submissions (submission_id, form_id, workspace_id, status, data, subject,"
    " reply_to, spam_score, client_ip, created_at) FROM STDIN",
    "COPY outbox (event_id, event_type, submission_id, form_id, workspace_id, payload,"
    " created_at, published_at, next_attempt_at) FROM STDIN",
    "COPY idempotency (scope, key, fingerprint, submission_id, created_at) FROM STDIN",
)


def prefill(url: str, target: Target, body: str, count: int) -> float:
    """Bulk-loads `count` rows into each of the three tables; returns the seconds taken."""
    started = time.perf_counter()
    until = datetime.now(UTC) - timedelta(hours=1)
    with psycopg.connect(url, autocommit=True) as conn:
        for batches in prefill_rows(target, body, count, until):
            with conn.transaction():
                for statement, lines in zip(_COPIES, batches, strict=True):
                    with conn.cursor().copy(statement) as copy:
                        copy.write("\n".join(lines) + "\n")
    return time.perf_counter() - started
