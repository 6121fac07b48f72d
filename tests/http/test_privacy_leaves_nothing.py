"""Nothing of an erased submission remains: submissions with files go in through the
public route, then are erased on request (POST /v1/erasures) or by their form's
retention (`intake purge`'s service, the same the relay runs); every table (all its
columns, as text) and every blob is then read back and searched for what they held.

Each store runs with a real blob store: the local directory and the S3 store on moto's
server (tests/support/s3_server.py), beside SQLite and PostgreSQL; memory with its own.
What another person sent stays, which also shows the dump reads what is there.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg
import pytest

from intake.adapters.blobs.local import LocalBlobStore
from intake.adapters.blobs.s3 import S3BlobStore
from intake.adapters.memory import InMemoryStore
from intake.domain.model import Scope
from intake.ports.blobs import BlobStore
from intake.service.admin import UploadChanges
from intake.service.purge import Purge, Retention
from tests.http.conftest import BACKENDS, Backend, Service, ServiceFactory
from tests.support.s3_server import REGION, S3Server
from tests.support.sqlite_rows import rows_text, stored_text

pytestmark = pytest.mark.slow

# (store, blob store): every store with each blob store it runs with in production.
SETUPS = [
    pytest.param(("memory", "memory"), id="memory"),
    pytest.param(("sqlite", "local"), id="sqlite-local"),
    pytest.param(("sqlite", "s3"), id="sqlite-s3"),
    pytest.param(("postgres", "local"), id="postgres-local", marks=pytest.mark.services),
    pytest.param(("postgres", "s3"), id="postgres-s3", marks=pytest.mark.services),
]
FAR_FUTURE = datetime(2100, 1, 1, tzinfo=UTC)
ADA = "ada.lovelace@example.com"
ADA_IP = "198.51.100.23"
BOB_IP = "192.0.2.77"
# What Ada sent, each unique enough that finding it anywhere means it was kept.
ADA_VALUES = [
    "Ada Lovelace",
    "analytical-engine-notes-7f3a",
    "bernoulli-numbers-9c2d",
    "ada-cv-e41b.pdf",
    "ADA-FILE-BODY-5d6e",
    ADA,
    ADA_IP,
    "198.51.100.0",  # her truncated address
]
BOB_VALUES = ["bob@example.com", "Bob Babbage", "difference-engine-1a2b", "BOB-FILE-BODY-8f9a"]


@pytest.fixture(scope="module")
def s3_server() -> Iterator[S3Server]:
    with S3Server() as server:
        yield server


@pytest.fixture(params=SETUPS)
def setup(request: pytest.FixtureRequest) -> tuple[str, str]:
    chosen: tuple[str, str] = request.param
    return chosen


@pytest.fixture
def backend(setup: tuple[str, str], request: pytest.FixtureRequest) -> Backend:
    return BACKENDS[setup[0]](request)


@pytest.fixture
def blobs(
    setup: tuple[str, str], tmp_path: Path, request: pytest.FixtureRequest
) -> Iterator[BlobStore | None]:
    kind = setup[1]
    if kind == "memory":
        yield None  # the service's own in-memory store
    elif kind == "local":
        yield LocalBlobStore(tmp_path / "blobs")
    else:
        server: S3Server = request.getfixturevalue("s3_server")
        bucket = server.new_bucket()
        yield S3BlobStore(
            bucket, "uploads", endpoint_url=server.endpoint, region=REGION, session=server.session()
        )
        server.drop_bucket(bucket)


@pytest.fixture
def svc(make_service: ServiceFactory, blobs: BlobStore | None) -> Iterator[Service]:
    service = make_service(blobs=blobs)
    yield service
    service.run(service.blobs.aclose)


# -- what is kept, read back whole --------------------------------------------------------


def everything(svc: Service, setup: tuple[str, str], tmp_path: Path, url: str | None) -> str:
    """Every row of every table, all columns as text, and every blob's key and bytes."""
    return _tables(svc, setup[0], tmp_path, url) + "\n" + _blobs(svc)


def _tables(svc: Service, store: str, tmp_path: Path, url: str | None) -> str:
    if store == "memory":
        inner = svc.store.inner
        assert isinstance(inner, InMemoryStore)
        return svc.run(stored_text, inner)
    if store == "sqlite":
        [path] = tmp_path.glob("intake-*.db")
        with closing(sqlite3.connect(path)) as conn:
            return rows_text(conn)
    assert url is not None
    with psycopg.connect(url) as conn:
        names = [
            row[0]
            for row in conn.execute(
                "SELECT table_name FROM information_schema.tables"
                " WHERE table_schema = 'public' AND table_type = 'BASE TABLE'"
            )
        ]
        return "\n".join(
            f"{name}: {row[0]}"
            for name in names
            for row in conn.execute(f"SELECT t::text FROM {name} AS t")
        )


def _blobs(svc: Service) -> str:
    async def read_all() -> str:
        texts = []
        async for info in svc.blobs.list(older_than=FAR_FUTURE):
            body = b"".join([chunk async for chunk in svc.blobs.read(info.key)])
            texts.append(f"{info.key}: {body.decode('latin-1')}")
        return "\n".join(texts)

    return svc.run(read_all)


def postgres_url(setup: tuple[str, str], request: pytest.FixtureRequest) -> str | None:
    if setup[0] != "postgres":
        return None
    url: str = request.getfixturevalue("postgres_url")
    return url


# -- the people and what they send --------------------------------------------------------


def _pdf(marker: str) -> bytes:
    return b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n" + marker.encode() * 20 + b"\n%%EOF\n"


def send_ada_and_bob(svc: Service, public_key: str, other_key: str) -> None:
    sent = [
        svc.public(
            public_key,
            peer=ADA_IP,
            idempotency_key="ada-1",
            data={"email": ADA, "name": "Ada Lovelace", "message": "analytical-engine-notes-7f3a"},
            files={"cv": ("ada-cv-e41b.pdf", _pdf("ADA-FILE-BODY-5d6e"), "application/pdf")},
        ),
        # Her address in another field, in capitals, and as the reply-to of another form.
        svc.public(
            other_key,
            peer=ADA_IP,
            json={"contact": {"emails": [ADA.upper()]}, "note": "bernoulli-numbers-9c2d"},
        ),
        svc.public(other_key, peer=ADA_IP, json={"_replyto": ADA, "note": "Ada Lovelace"}),
        svc.public(
            public_key,
            peer=BOB_IP,
            data={"email": "bob@example.com", "name": "Bob Babbage", "message": BOB_VALUES[2]},
            files={"cv": ("bob.pdf", _pdf("BOB-FILE-BODY-8f9a"), "application/pdf")},
        ),
    ]
    assert [r.status_code for r in sent] == [201] * 4, [r.text for r in sent]


def forms(svc: Service) -> tuple[str, str, str, str]:
    """A workspace, a form that takes files, another form, and a manage key."""
    workspace = svc.workspace()
    ws = workspace.workspace_id
    uploads = UploadChanges(enabled=True)
    first = svc.form(ws, name="Apply", uploads=uploads)
    second = svc.form(ws, name="Contact")
    manage = svc.run(svc.services.keys.create, ws, frozenset({Scope.MANAGE}))
    return first.public_form_key, second.public_form_key, manage.secret, first.form_id


def test_an_erasure_leaves_nothing_of_the_person(
    svc: Service, setup: tuple[str, str], tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    url = postgres_url(setup, request)
    first_key, second_key, manage, _ = forms(svc)
    send_ada_and_bob(svc, first_key, second_key)
    before = everything(svc, setup, tmp_path, url)
    assert all(value in before for value in ADA_VALUES + BOB_VALUES)

    answer = svc.client.post(
        "/v1/erasures",
        headers={"authorization": f"Bearer {manage}"},
        json={"email": f"  {ADA.title()} "},
    )

    assert answer.status_code == 200, answer.text
    receipt = answer.json()
    assert receipt["count"] == 3
    assert receipt["dry_run"] is False
    assert sorted(f["count"] for f in receipt["forms"]) == [1, 2]
    after = everything(svc, setup, tmp_path, url)
    assert [value for value in ADA_VALUES if value.lower() in after.lower()] == []
    assert all(value in after for value in BOB_VALUES)
    deleted = [
        row for row in svc.run(svc.store.submissions.outbox, 1000)
        if row.event.event_type.value == "submission.deleted"
    ]  # fmt: skip
    assert sorted(row.event.submission_id for row in deleted) == sorted(
        s["submission_id"] for s in receipt["submissions"]
    )


def test_a_forms_retention_leaves_nothing_of_its_old_submissions(
    svc: Service, setup: tuple[str, str], tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    url = postgres_url(setup, request)
    first_key, second_key, manage, form_id = forms(svc)
    changed = svc.client.patch(
        f"/v1/forms/{form_id}",
        headers={"authorization": f"Bearer {manage}"},
        json={"retention_days": 30},
    )
    assert changed.status_code == 200, changed.text
    assert changed.json()["retention_days"] == 30
    send_ada_and_bob(svc, first_key, second_key)  # Ada's first, and Bob's, to this form
    svc.clock.advance(timedelta(days=31).total_seconds())
    fresh = svc.public(first_key, peer=BOB_IP, data={"email": "carol@example.com"})
    assert fresh.status_code == 201
    svc.run(_deliver_everything, svc)

    purged = svc.run(
        Purge(svc.store.submissions, svc.store.forms, svc.blobs, svc.clock).run,
        Retention(
            outbox=timedelta(days=7),
            flagged=timedelta(days=30),
            upload_grace=timedelta(hours=1),
            client_ip_full=timedelta(hours=24),
        ),
    )

    assert (purged.expired.submissions, purged.expired.files) == (2, 2)
    after = everything(svc, setup, tmp_path, url)
    old_ones = ["analytical-engine-notes-7f3a", "ADA-FILE-BODY-5d6e", "ada-cv-e41b.pdf"]
    old_ones += ["Bob Babbage", "BOB-FILE-BODY-8f9a", "difference-engine-1a2b", ADA_IP]
    assert [value for value in old_ones if value in after] == []
    assert "carol@example.com" in after
    assert "bernoulli-numbers-9c2d" in after  # the other form keeps everything


async def _deliver_everything(svc: Service) -> None:
    """The relay's fan-out: no destination, so every event is published, delivered to none."""
    while await svc.store.deliveries.fan_out(svc.clock.now(), 100):
        pass
