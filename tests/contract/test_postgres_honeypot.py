"""On PostgreSQL a filled honeypot's write is one statement, one round trip, whatever it
meets: a free key, a held key, a changed form; as a submission's commit is."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from attrs import evolve

from intake.adapters.postgres import PostgresStore
from intake.adapters.postgres.database import Database
from intake.domain.model import FormMode
from intake.ports.submissions import Committed, FormCheck, HoneypotHit, IdempotencyTaken
from tests.contract.builders import FORM_ID, form, record, seed, submission
from tests.contract.conftest import PostgresBackend

pytestmark = [pytest.mark.anyio, pytest.mark.services]

OPEN_FORM = evolve(form(), mode=FormMode.PUBLIC, enabled=True)


@pytest.fixture
async def store(postgres_url: str) -> AsyncIterator[PostgresStore]:
    opened = await PostgresBackend(postgres_url).open_postgres()
    try:
        await seed(opened, OPEN_FORM)
        yield opened
    finally:
        await opened.close()


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every statement the store sends from now on."""
    sent: list[str] = []
    for name in ("fetch_one", "fetch_all", "execute"):
        original = getattr(Database, name)

        async def counted(
            self: Database, query: str, params: Any = None, _o: Any = original
        ) -> Any:
            sent.append(query)
            return await _o(self, query, params)

        monkeypatch.setattr(Database, name, counted)
    return sent


async def test_a_honeypot_write_is_one_round_trip_even_on_a_held_key(
    store: PostgresStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    check = FormCheck(FORM_ID, OPEN_FORM.public_form_key)
    first = HoneypotHit(FORM_ID, "2026-01-15", record(submission(1)), check)
    second = HoneypotHit(FORM_ID, "2026-01-15", record(submission(2)), check)
    sent = _counting(monkeypatch)

    assert await store.submissions.record_honeypot(first) == Committed()
    assert len(sent) == 1
    assert first.idempotency is not None
    assert await store.submissions.record_honeypot(second) == IdempotencyTaken(first.idempotency)
    assert len(sent) == 2
