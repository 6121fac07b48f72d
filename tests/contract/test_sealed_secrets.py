"""Secrets sealed at rest, on SQLite and PostgreSQL: a dump of the database holds none of
them in plain text; each opens only in its own row; a rotation seals them all again under
a new key, an older version's plain values are sealed by `intake migrate`'s step, and
every value reads the same throughout."""

from __future__ import annotations

import base64
import os
import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import attrs
import psycopg
import pytest
from psycopg import sql

from intake.adapters.postgres import open_postgres_store
from intake.adapters.sealing import AeadSealer, generate_key
from intake.adapters.sqlite import open_sqlite_store
from intake.domain.chat import ChatApp, ChatDestination
from intake.domain.deliveries import WebhookEndpoint
from intake.domain.model import Challenge, ChallengeProvider
from intake.domain.sealing import SealingError
from intake.ports.store import Store
from intake.service.schema import Schema
from intake.service.sealing import SecretSealing
from tests.conftest import new_postgres_database
from tests.contract import builders

pytestmark = pytest.mark.anyio

DOWNLOAD_SECRET_NAME = "download-links"
CHALLENGE_SECRET = "0x4AAAAAAA-challenge-secret-of-form-one"
OTHER_CHALLENGE_SECRET = "0x4AAAAAAA-challenge-secret-of-form-two"
WEBHOOK_SECRET = "whsec_" + base64.b64encode(b"webhook-signing-key-32-bytes-long").decode()
CHAT_SECRET = "https://hooks.slack.com/services/T0SEALED/B0SEALED/chat-webhook-secret"
# A webhook URL may carry its receiver's token, so it is sealed as a chat's is.
WEBHOOK_URL = "https://hooks.example.com/in/T0KEN-in-the-path?token=webhook-url-token"
FORM_ONE, FORM_TWO, ENDPOINT = "frm_sealed_one", "frm_sealed_two", "wh_sealed_one"
CHAT = "chat_sealed_one"


class Database:
    """One new database of either kind, opened with whatever key a test gives, and
    read as a dump is: every row of every table as text."""

    def __init__(self, kind: str, url: str) -> None:
        self.kind = kind
        self.url = url

    async def open(self, sealer: AeadSealer) -> Store:
        if self.kind == "sqlite":
            return await open_sqlite_store(self.url, sealer=sealer)
        store = await open_postgres_store(self.url, sealer=sealer, form_cache_ttl=0)
        await store.migrate()
        return store

    def dump(self) -> str:
        if self.kind == "sqlite":
            with closing(sqlite3.connect(self.url.removeprefix("sqlite:///"))) as conn:
                return "\n".join(conn.iterdump())
        with psycopg.connect(self.url, autocommit=True) as conn:
            tables = [
                row[0]
                for row in conn.execute(
                    "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"
                )
            ]
            lines = []
            for table in tables:
                query = sql.SQL("SELECT t::text FROM {} t").format(sql.Identifier(table))
                lines += [f"{table}: {row[0]}" for row in conn.execute(query)]
        return "\n".join(lines)

    def execute(self, statement: str, params: tuple[object, ...]) -> None:
        if self.kind == "sqlite":
            with closing(sqlite3.connect(self.url.removeprefix("sqlite:///"))) as lite, lite:
                lite.execute(statement.replace("%s", "?"), params)
            return
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(statement.encode(), params)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.services)])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Database]:
    if request.param == "sqlite":
        yield Database("sqlite", f"sqlite:///{tmp_path / 'intake.db'}")
        return
    with new_postgres_database() as url:
        yield Database("postgres", url)


@pytest.fixture
def old_key() -> str:
    return generate_key()


@pytest.fixture
async def filled(database: Database, old_key: str) -> bytes:
    """Two forms with challenge secrets, a webhook and the download-link secret, stored
    under `old_key`; yields the download-link secret."""
    store = await database.open(AeadSealer.from_keys(old_key))
    try:
        await store.workspaces.add(builders.workspace())
        for form_id, secret in ((FORM_ONE, CHALLENGE_SECRET), (FORM_TWO, OTHER_CHALLENGE_SECRET)):
            form = builders.form(form_id=form_id, public_form_key=f"key_{form_id}")
            challenge = Challenge(ChallengeProvider.TURNSTILE, secret)
            await store.forms.add(attrs.evolve(form, challenge=challenge))
        endpoint = WebhookEndpoint(ENDPOINT, FORM_ONE, WEBHOOK_URL, WEBHOOK_SECRET)
        await store.destinations.add_endpoint(endpoint)
        await store.destinations.add_chat(
            ChatDestination(CHAT, FORM_ONE, ChatApp.SLACK, CHAT_SECRET)
        )
        download = await store.secrets.get_or_create(DOWNLOAD_SECRET_NAME, os.urandom(32))
    finally:
        await store.close()
    return download


def _plain_forms(download: bytes) -> list[str]:
    """Every way a dump could show the secrets in plain text."""
    return [
        CHALLENGE_SECRET,
        OTHER_CHALLENGE_SECRET,
        WEBHOOK_SECRET,
        WEBHOOK_SECRET.removeprefix("whsec_"),
        CHAT_SECRET,
        CHAT_SECRET.split("/services/")[1],
        WEBHOOK_URL,
        "T0KEN-in-the-path",
        "webhook-url-token",
        download.hex(),
        download.hex().upper(),
        base64.b64encode(download).decode(),
        base64.urlsafe_b64encode(download).decode().rstrip("="),
    ]


async def _read_all(store: Store) -> tuple[str | None, str | None, str, str, str, bytes]:
    one, two = await store.forms.get(FORM_ONE), await store.forms.get(FORM_TWO)
    assert one is not None
    assert two is not None
    endpoint = await store.destinations.get_endpoint(ENDPOINT)
    assert endpoint is not None
    chat = await store.destinations.get_chat(CHAT)
    assert chat is not None
    download = await store.secrets.get_or_create(DOWNLOAD_SECRET_NAME, os.urandom(32))
    return (
        one.challenge.secret if one.challenge else None,
        two.challenge.secret if two.challenge else None,
        endpoint.secret,
        endpoint.url,
        chat.secret,
        download,
    )


async def test_a_dump_holds_none_of_the_secrets_in_plain_text(
    database: Database, old_key: str, filled: bytes
) -> None:
    dump = database.dump()

    leaked = [plain for plain in _plain_forms(filled) if plain in dump]
    assert leaked == []
    assert dump.count("sealed:v1:") == 5  # text columns
    assert b"sealed:v1:".hex() in dump.lower()  # the binary one, as its hex
    # Each still reads as it was stored, through every way in.
    store = await database.open(AeadSealer.from_keys(old_key))
    try:
        assert await _read_all(store) == (
            CHALLENGE_SECRET,
            OTHER_CHALLENGE_SECRET,
            WEBHOOK_SECRET,
            WEBHOOK_URL,
            CHAT_SECRET,
            filled,
        )
        context = await store.forms.resolve_public_key(f"key_{FORM_ONE}")
        assert context is not None
        assert context.form.challenge is not None
        assert context.form.challenge.secret == CHALLENGE_SECRET
        listed = await store.destinations.list_endpoints(FORM_ONE)
        assert [(e.url, e.secret) for e in listed] == [(WEBHOOK_URL, WEBHOOK_SECRET)]
    finally:
        await store.close()


async def test_a_sealed_value_copied_into_another_row_does_not_open(
    database: Database, old_key: str, filled: bytes
) -> None:
    database.execute(
        "UPDATE forms SET challenge_secret ="
        " (SELECT challenge_secret FROM forms WHERE form_id = %s) WHERE form_id = %s",
        (FORM_ONE, FORM_TWO),
    )
    store = await database.open(AeadSealer.from_keys(old_key))
    try:
        assert (await store.forms.get(FORM_ONE)) is not None
        with pytest.raises(SealingError, match=FORM_TWO) as refused:
            await store.forms.get(FORM_TWO)
        assert CHALLENGE_SECRET not in str(refused.value)
    finally:
        await store.close()


async def test_without_its_key_a_sealed_secret_does_not_open(
    database: Database, filled: bytes
) -> None:
    store = await database.open(AeadSealer.from_keys(generate_key()))
    try:
        with pytest.raises(SealingError, match="not configured"):
            await store.forms.get(FORM_ONE)
    finally:
        await store.close()


async def test_a_rotation_seals_every_secret_under_the_new_key_and_each_reads_the_same(
    database: Database, old_key: str, filled: bytes
) -> None:
    new_key = generate_key()
    rotating = AeadSealer.from_keys(new_key, [old_key])
    store = await database.open(rotating)
    try:
        before = await _read_all(store)
        report = await SecretSealing(store, rotating).rotate()
        again = await SecretSealing(store, rotating).rotate()
    finally:
        await store.close()

    assert report.resealed == 6
    assert report.by_column == {
        "forms.challenge_secret": 2,
        "webhook_endpoints.secret": 1,
        "webhook_endpoints.url": 1,
        "chat_destinations.secret": 1,
        "secrets.value": 1,
    }
    assert (again.resealed, again.current) == (0, 6)
    dump = database.dump()
    assert AeadSealer.from_keys(old_key).key_id not in dump
    assert [plain for plain in _plain_forms(filled) if plain in dump] == []
    # The old key can go: the new one alone opens everything, unchanged.
    store = await database.open(AeadSealer.from_keys(new_key))
    try:
        assert (
            await _read_all(store)
            == before
            == (
                CHALLENGE_SECRET,
                OTHER_CHALLENGE_SECRET,
                WEBHOOK_SECRET,
                WEBHOOK_URL,
                CHAT_SECRET,
                filled,
            )
        )
    finally:
        await store.close()


async def test_plain_secrets_of_an_older_version_are_sealed_and_read_the_same(
    database: Database, old_key: str, filled: bytes
) -> None:
    plain_download = os.urandom(32)
    database.execute("UPDATE forms SET challenge_secret = %s WHERE form_id = %s", (
        CHALLENGE_SECRET, FORM_ONE))  # fmt: skip
    database.execute(
        "UPDATE webhook_endpoints SET secret = %s, url = %s", (WEBHOOK_SECRET, WEBHOOK_URL)
    )
    database.execute("UPDATE chat_destinations SET secret = %s", (CHAT_SECRET,))
    database.execute("UPDATE secrets SET value = %s", (plain_download,))
    sealer = AeadSealer.from_keys(old_key)
    store = await database.open(sealer)
    try:
        plain = await _read_all(store)
        report = await Schema(store, sealer).seal_plain_secrets()
        sealed = await _read_all(store)
    finally:
        await store.close()

    assert (
        plain
        == sealed
        == (
            CHALLENGE_SECRET,
            OTHER_CHALLENGE_SECRET,
            WEBHOOK_SECRET,
            WEBHOOK_URL,
            CHAT_SECRET,
            plain_download,
        )
    )
    assert (report.resealed, report.current) == (5, 1)
    assert report.by_column["webhook_endpoints.url"] == 1
    assert [p for p in _plain_forms(plain_download) if p in database.dump()] == []


async def test_a_value_changed_while_a_rotation_reads_it_is_left_as_changed(
    database: Database, old_key: str, filled: bytes
) -> None:
    sealer = AeadSealer.from_keys(generate_key(), [old_key])
    store = await database.open(sealer)
    try:
        (read,) = await store.sealed.values("webhook_endpoints", "secret", None, 10)
        endpoint = await store.destinations.get_endpoint(ENDPOINT)
        assert endpoint is not None
        database.execute("UPDATE webhook_endpoints SET secret = %s", ("whsec_changed",))

        written = await store.sealed.replace(read, sealer.seal(b"stale", read.place))

        assert written is False
        assert (await store.destinations.get_endpoint(ENDPOINT)) == attrs.evolve(
            endpoint, secret="whsec_changed"
        )
        with pytest.raises(ValueError, match="not a sealed column"):
            await store.sealed.values("forms", "name", None, 10)
    finally:
        await store.close()
