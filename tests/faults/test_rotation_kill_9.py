"""`intake secrets rotate` killed with SIGKILL in the middle, on the embedded SQLite file
and on PostgreSQL: every secret still opens (under the old key or the new one, both
configured), and a second run finishes the rotation, after which the new key alone opens
them all, each unchanged."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import anyio
import psycopg
import pytest

from intake.adapters.postgres import open_postgres_store
from intake.adapters.sealing import AeadSealer, generate_key
from intake.adapters.sqlite import open_sqlite_store
from intake.domain.model import Challenge, ChallengeProvider, Form, Workspace
from intake.ports.store import Store
from tests.conftest import new_postgres_database
from tests.faults.harness import FAULT_TIMEOUT, report
from tests.support.processes import IntakeProcess, clean_env, run_installed_cli

pytestmark = [pytest.mark.faults, pytest.mark.slow, pytest.mark.timeout(FAULT_TIMEOUT)]

FORMS = {"sqlite": 1500, "postgres": 4000}  # enough that the rotation is caught midway
KILL_TIMEOUT = 60.0


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.services)])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'intake.db'}"
        return
    with new_postgres_database() as url:
        yield url


async def _open(database: str, sealer: AeadSealer) -> Store:
    if database.startswith("sqlite"):
        return await open_sqlite_store(database, sealer=sealer)
    store = await open_postgres_store(database, sealer=sealer, form_cache_ttl=0)
    await store.migrate()
    return store


def _secret(index: int) -> str:
    return f"challenge-secret-{index:05d}"


async def _fill(database: str, key: str, count: int) -> None:
    store = await _open(database, AeadSealer.from_keys(key))
    try:
        await store.workspaces.add(Workspace("ws_rotation", "Rotation"))
        for index in range(count):
            challenge = Challenge(ChallengeProvider.TURNSTILE, _secret(index))
            form_id = f"frm_{index:05d}"
            await store.forms.add(
                Form(form_id, "ws_rotation", f"pk_{index:05d}", challenge=challenge)
            )
    finally:
        await store.close()


async def _secrets(database: str, sealer: AeadSealer) -> list[str]:
    """Every form's challenge secret, opened: SealingError if any does not open."""
    store = await _open(database, sealer)
    try:
        forms = await store.forms.list()
    finally:
        await store.close()
    return sorted(form.challenge.secret for form in forms if form.challenge)


def _under(database: str, key: str) -> int:
    """How many forms' secrets are sealed under `key`, read as another process would."""
    prefix = f"sealed:v1:{AeadSealer.from_keys(key).key_id}:%"
    query = "SELECT count(*) FROM forms WHERE challenge_secret LIKE %s"
    if database.startswith("sqlite"):
        path = database.removeprefix("sqlite:///")
        with closing(sqlite3.connect(path, timeout=5)) as conn:
            return int(conn.execute(query.replace("%s", "?"), (prefix,)).fetchone()[0])
    with psycopg.connect(database, autocommit=True) as conn:
        row = conn.execute(query, (prefix,)).fetchone()
        assert row is not None
        return int(row[0])


def test_a_rotation_killed_midway_leaves_every_secret_readable_and_finishes_when_rerun(
    database: str, tmp_path: Path
) -> None:
    kind = "sqlite" if database.startswith("sqlite") else "postgres"
    count = FORMS[kind]
    old_key, new_key = generate_key(), generate_key()
    anyio.run(_fill, database, old_key, count)
    expected = sorted(_secret(index) for index in range(count))
    env = clean_env(
        INTAKE_DATABASE_URL=database, INTAKE_SECRET_KEY=new_key, INTAKE_SECRET_KEYS_OLD=old_key
    )

    rotation = IntakeProcess(env, tmp_path / "rotate.log", ["secrets", "rotate"]).start()
    deadline = time.monotonic() + KILL_TIMEOUT
    while _under(database, new_key) < count // 10 and time.monotonic() < deadline:
        assert rotation.running, rotation.log_text()
        time.sleep(0.005)
    rotation.kill()
    resealed_at_kill = _under(database, new_key)

    assert 0 < resealed_at_kill < count, f"not killed midway: {resealed_at_kill} of {count}"
    # Restarted with both keys: every secret opens, each unchanged.
    both = AeadSealer.from_keys(new_key, [old_key])
    assert anyio.run(_secrets, database, both) == expected

    finished = run_installed_cli(env, "secrets", "rotate")

    report("rotation-kill-9", forms=count, resealed_before_kill=resealed_at_kill,
           resealed_after=finished["resealed"])  # fmt: skip
    assert finished["resealed"] + finished["current"] == count
    assert finished["current"] >= resealed_at_kill  # what the killed run did stays done
    assert _under(database, new_key) == count
    assert anyio.run(_secrets, database, AeadSealer.from_keys(new_key)) == expected
