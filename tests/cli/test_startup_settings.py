"""What a process says of its settings as it starts: a setting it cannot use is blamed on
the variable that holds it."""

from __future__ import annotations

import pytest

from tests.cli.conftest import Cli


@pytest.mark.parametrize(
    "redis_url",
    ["redis://:hunter2@localhost:notaport/0", "http://localhost:6379/0"],
    ids=["bad port", "bad scheme"],
)
def test_a_malformed_redis_url_is_blamed_on_intake_redis_url(
    cli: Cli, monkeypatch: pytest.MonkeyPatch, redis_url: str
) -> None:
    monkeypatch.setenv("INTAKE_REDIS_URL", redis_url)

    result = cli("serve", "--port", "1", "--json")

    assert result.code == 1
    error = result.document["error"]
    assert error.startswith("INTAKE_REDIS_URL: ")
    assert "INTAKE_DATABASE_URL" not in error
    assert "hunter2" not in result.out + result.err


def test_a_malformed_database_url_is_still_blamed_on_intake_database_url(
    cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("INTAKE_DATABASE_URL", "sqlite:/intake.db")

    result = cli("migrate", "--json")

    assert result.code == 1
    assert result.document["error"].startswith("INTAKE_DATABASE_URL: ")
