"""The command line suite's harness: `main` called in-process against a SQLite file in
the test's own directory, and the HTTP app on the same database to make submissions."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from attrs import frozen
from starlette.testclient import TestClient

from intake.adapters.memory import FakeChallengeVerifier
from intake.adapters.sqlite.connection import connect
from intake.adapters.sqlite.migrations import migrate
from intake.entrypoints.cli import main
from intake.entrypoints.http.app import create_app
from intake.ports.challenge import ChallengeVerdict

# Tokens the fake challenge provider knows: one passes, one finds the provider down.
PASSING_TOKEN = "token-pass"
OUTAGE_TOKEN = "token-outage"


@frozen
class Result:
    code: int
    out: str
    err: str

    @property
    def document(self) -> dict[str, Any]:
        """The one JSON document a --json command printed."""
        parsed = json.loads(self.out)
        assert isinstance(parsed, dict)
        return parsed


class Cli:
    def __init__(self, capsys: pytest.CaptureFixture[str]) -> None:
        self._capsys = capsys

    def __call__(self, *argv: str) -> Result:
        self._capsys.readouterr()  # drop anything printed before this command
        code = main(list(argv))
        captured = self._capsys.readouterr()
        assert "Traceback" not in captured.err
        return Result(code, captured.out, captured.err)

    def json(self, *argv: str) -> dict[str, Any]:
        """Runs a command that must succeed, with --json, and gives its document."""
        result = self(*argv, "--json")
        assert result.code == 0, result.err
        return result.document


@pytest.fixture
def database_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    # A clean INTAKE_* environment, whatever the developer's shell has set.
    for name in list(os.environ):
        if name.startswith("INTAKE_"):
            monkeypatch.delenv(name)
    path = tmp_path / "intake.db"
    url = f"sqlite:///{path}"
    monkeypatch.setenv("INTAKE_DATABASE_URL", url)
    # Migrated, as `intake migrate` leaves it: the commands that only read want that.
    with closing(connect(str(path))) as conn:
        migrate(conn)
    # Room for every submission a test makes from the one test client address.
    monkeypatch.setenv("INTAKE_RATE_LIMIT_PUBLIC_BURST", "100/30")
    return url


@pytest.fixture
def cli(database_url: str, capsys: pytest.CaptureFixture[str]) -> Cli:
    return Cli(capsys)


@pytest.fixture
def http(database_url: str) -> Iterator[TestClient]:
    """The HTTP app on the same database as the command line, as `intake serve` runs it."""
    verifier = FakeChallengeVerifier(
        {PASSING_TOKEN: ChallengeVerdict.PASSED, OUTAGE_TOKEN: ChallengeVerdict.UNAVAILABLE}
    )
    with TestClient(create_app(challenge=verifier)) as client:
        yield client


def submit(
    client: TestClient,
    public_form_key: str,
    data: Mapping[str, object],
    *,
    token: str | None = None,
) -> str:
    """Posts to the public endpoint; the submission must be accepted."""
    headers = {"X-Challenge-Token": token} if token else {}
    response = client.post(f"/f/{public_form_key}", json=dict(data), headers=headers)
    assert response.status_code == 201, response.text
    submission_id = response.json()["submission_id"]
    assert isinstance(submission_id, str)
    return submission_id
