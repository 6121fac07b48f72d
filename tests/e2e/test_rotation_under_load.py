"""`intake secrets rotate` while submissions come in and `intake relay` delivers them, on
the embedded SQLite file and on PostgreSQL: no delivery is lost, every webhook is signed
with the endpoint's unchanged secret, and a download link signed before the rotation is
still accepted by a process that has only the new key."""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import anyio
import pytest
from standardwebhooks import Webhook
from starlette.testclient import TestClient

from intake.adapters.sealing import generate_key
from intake.config import Settings
from intake.entrypoints.http.app import create_app
from intake.library_runtime import open_runtime
from tests.conftest import new_postgres_database
from tests.support.processes import IntakeProcess, clean_env, console_script, wait_for
from tests.support.receiver import Receiver

pytestmark = [pytest.mark.slow]

SEALED_FORMS = 150  # forms with a challenge secret and a webhook: what rotation goes over
DEADLINE = 60.0
LIFTED = {
    "INTAKE_RATE_LIMIT_PUBLIC_BURST": "1000000/30",
    "INTAKE_RATE_LIMIT_PUBLIC_SUSTAINED": "1000000/600",
    "INTAKE_RATE_LIMIT_PUBLIC_FORM": "1000000/600",
    "INTAKE_PLAN_FREE_LIMIT": "1000000",
}


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.services)])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'intake.db'}"
        return
    with new_postgres_database() as url:
        yield url


def _env(database: str, key: str, *old: str) -> dict[str, str]:
    return clean_env(
        INTAKE_DATABASE_URL=database,
        INTAKE_SECRET_KEY=key,
        INTAKE_SECRET_KEYS_OLD=",".join(old),
        INTAKE_WEBHOOK_ALLOW_PRIVATE="true",
        INTAKE_BASE_URL="https://forms.example",
        **LIFTED,
    )


def _setup(env: dict[str, str], receiver: Receiver) -> tuple[str, str, str]:
    """Under the old key: the loaded form and its webhook, many other forms with sealed
    secrets, and a download link; gives the public key, webhook secret and link."""

    async def setup() -> tuple[str, str, str]:
        async with open_runtime(Settings.from_env(env)) as runtime:
            await runtime.store.migrate()
        # Opened again on the migrated database: the signer reads its secret at open.
        async with open_runtime(Settings.from_env(env)) as runtime:
            services = runtime.services
            workspace = await services.workspaces.create("Rotation")
            form = await services.forms.create(workspace.workspace_id)
            hook = await services.webhooks.add(form.form_id, receiver.url())
            for index in range(SEALED_FORMS):
                other = await services.forms.create(workspace.workspace_id, name=f"f{index}")
                await services.webhooks.add(other.form_id, receiver.url(f"/other/{index}"))
            link = runtime.signer.link("sub_before_rotation", 0, datetime.now(UTC)).url
        return form.public_form_key, hook.secret, link

    return anyio.run(setup)


class Load:
    """Submissions to one form, one after another, from a thread, until stopped."""

    def __init__(self, env: dict[str, str], public_form_key: str) -> None:
        self._env = env
        self._key = public_form_key
        self._stop = threading.Event()
        self.made: list[tuple[float, str]] = []  # (when answered, submission id)
        self.failures: list[str] = []
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Load:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=DEADLINE)

    def _run(self) -> None:
        with TestClient(create_app(Settings.from_env(self._env))) as client:
            while not self._stop.is_set():
                answer = client.post(f"/f/{self._key}", json={"message": "hello"})
                if answer.status_code == 201:
                    self.made.append((time.monotonic(), answer.json()["submission_id"]))
                else:
                    self.failures.append(f"{answer.status_code} {answer.text}")
                time.sleep(0.01)  # a steady load, not a flood the relay must catch up on

    def wait_for(self, count: int) -> None:
        wait_for(
            lambda: len(self.made) >= count,
            DEADLINE,
            f"{count} submissions",
            lambda: f"made {len(self.made)}; failures: {self.failures[-3:]}",
        )


def _rotate(env: dict[str, str]) -> tuple[float, float, str]:
    started = time.monotonic()
    done = subprocess.run(
        [console_script(), "secrets", "rotate", "--json"],
        env=env, capture_output=True, text=True, timeout=DEADLINE * 2, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return started, time.monotonic(), done.stdout


def test_rotation_under_load_loses_no_delivery_and_breaks_no_valid_link(
    database: str, receiver: Receiver, tmp_path: Path
) -> None:
    old_key, new_key = generate_key(), generate_key()
    public_form_key, webhook_secret, link = _setup(_env(database, old_key), receiver)
    rotating = _env(database, new_key, old_key)  # every process restarted with both keys
    relay = IntakeProcess(rotating, tmp_path / "relay.log", ["relay"]).start()
    try:
        with Load(rotating, public_form_key) as load:
            load.wait_for(20)
            started, ended, printed = _rotate(rotating)
            during = [sid for at, sid in load.made if started <= at <= ended]
            load.wait_for(len(load.made) + 20)
        made = {sid for _, sid in load.made}
        wait_for(
            lambda: made <= _delivered(receiver, webhook_secret),
            DEADLINE,
            "every submission delivered",
        )
    finally:
        relay.stop()

    assert load.failures == []
    assert '"resealed": ' in printed
    assert during, "no submission was made while the rotation ran"
    # Every delivery verified with the secret handed out before the rotation.
    assert made <= _delivered(receiver, webhook_secret)
    assert relay.returncode == 0, relay.log_text()[-2000:]

    # The old key is gone: the new one alone opens everything, and the link still works.
    only_new = _env(database, new_key)
    query = parse_qs(urlsplit(link).query)

    async def check() -> bool:
        async with open_runtime(Settings.from_env(only_new)) as runtime:
            forms = await runtime.services.forms.all()
            assert len(forms) == SEALED_FORMS + 1
            return runtime.signer.verify(
                "sub_before_rotation",
                0,
                query["expires"][0],
                query["signature"][0],
                datetime.now(UTC),
            )

    assert anyio.run(check) is True


def _delivered(receiver: Receiver, secret: str) -> set[str]:
    """The submission ids of the webhooks received on the loaded form's path, each one's
    signature verified (Standard Webhooks) with `secret`."""
    found = set()
    for request in receiver.requests:
        if request.path != "/hooks/intake":
            continue
        payload = Webhook(secret).verify(request.body, dict(request.headers))
        assert isinstance(payload, dict)
        found.add(str(payload["submission_id"]))
    return found
