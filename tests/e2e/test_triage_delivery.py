"""Triage end to end, on the embedded SQLite file and on PostgreSQL (a fresh database): a
spam submission released over the management API of a real `intake serve` reaches each
webhook endpoint and each mail recipient exactly once through `intake relay`; deleting
it then sends `submission.deleted` to the webhook endpoints only."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from standardwebhooks import Webhook

from intake.config import Settings
from intake.domain.model import Scope
from intake.library_runtime import open_runtime
from intake.service.admin import FormChanges
from tests.e2e.test_relay_delivery import _postgres_database
from tests.support.processes import ServedProcess, clean_env, run_cli
from tests.support.receiver import ReceivedRequest, Receiver
from tests.support.smtp_server import SmtpServer

pytestmark = [pytest.mark.slow]

RECIPIENTS = ("owner@example.com", "triage@example.com")
PATHS = ("/hooks/created-only", "/hooks/with-flagged")
FIELDS = {"email": "ada@example.com", "message": "Hello", "site": "https://example.com/"}


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.services)])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'intake.db'}"
    else:
        yield from _postgres_database()


@pytest.fixture
def env(database: str, smtp: SmtpServer) -> dict[str, str]:
    return clean_env(
        INTAKE_DATABASE_URL=database,
        INTAKE_WEBHOOK_ALLOW_PRIVATE="true",  # the receiver is plain http on 127.0.0.1
        INTAKE_SMTP_URL=smtp.url,
        INTAKE_MAIL_FROM="intake@example.com",
    )


@pytest.fixture
def setup(env: dict[str, str], receiver: Receiver) -> dict[str, Any]:
    """A form that scores a link as spam, two webhook endpoints (one also taking flagged
    submissions), two mail recipients, and a key that submits and manages."""

    async def make() -> dict[str, Any]:
        async with open_runtime(Settings.from_env(env)) as runtime:
            await runtime.store.migrate()
            services = runtime.services
            workspace = await services.workspaces.create("E2E")
            form = await services.forms.create(workspace.workspace_id)
            await services.forms.update(form.form_id, FormChanges(spam_threshold=0.001))
            secrets = {}
            for path in PATHS:
                hook = await services.webhooks.add(
                    form.form_id, receiver.url(path), include_flagged=path.endswith("flagged")
                )
                secrets[path] = hook.secret
            for email in RECIPIENTS:
                await services.recipients.add(form.form_id, email)
            key = await services.keys.create(
                workspace.workspace_id, scopes=frozenset({Scope.SUBMIT, Scope.MANAGE})
            )
        return {"form_id": form.form_id, "secrets": secrets, "key": key.secret}

    return anyio.run(make)


def _events(receiver: Receiver, secrets: dict[str, str]) -> Counter[tuple[str, str]]:
    """(endpoint path, event type) of every request, each verified with its secret."""
    seen: Counter[tuple[str, str]] = Counter()
    for request in receiver.requests:
        seen[(request.path, _verify(secrets[request.path], request)["type"])] += 1
    return seen


def _verify(secret: str, request: ReceivedRequest) -> dict[str, Any]:
    payload = Webhook(secret).verify(request.body, dict(request.headers))
    assert isinstance(payload, dict)
    return payload


def test_a_released_spam_reaches_everyone_once_and_its_deletion_the_webhooks_only(
    env: dict[str, str],
    setup: dict[str, Any],
    receiver: Receiver,
    smtp: SmtpServer,
    tmp_path: Path,
) -> None:
    secrets = setup["secrets"]
    auth = {"authorization": f"Bearer {setup['key']}"}
    with (
        ServedProcess(env, tmp_path / "serve.log") as served,
        httpx.Client(base_url=served.base, headers=auth, timeout=10.0) as api,
    ):
        answer = api.post(f"/v1/forms/{setup['form_id']}/submissions", json=FIELDS)
        assert answer.status_code == 201, answer.text
        submission_id = answer.json()["submission_id"]
        run_cli(env, "relay", "--once")
        flagged = Counter({(PATHS[1], "submission.flagged"): 1})
        assert _events(receiver, secrets) == flagged
        assert smtp.messages == []

        released = api.patch(f"/v1/submissions/{submission_id}", json={"status": "accepted"})
        again = api.patch(f"/v1/submissions/{submission_id}", json={"status": "accepted"})
        assert released.status_code == 200
        assert released.json()["status"] == "accepted"
        assert again.status_code == 200
        run_cli(env, "relay", "--once")
        run_cli(env, "relay", "--once")  # nothing more to send

        created = Counter({(path, "submission.created"): 1 for path in PATHS})
        assert _events(receiver, secrets) == flagged + created
        for request in receiver.requests:
            payload = _verify(secrets[request.path], request)
            assert payload["submission_id"] == submission_id
            if payload["type"] == "submission.created":
                assert payload["data"] == FIELDS
                assert payload["status"] == "accepted"
        assert sorted(rcpt for m in smtp.messages for rcpt in m.rcpt_tos) == sorted(RECIPIENTS)
        assert {m.message["X-Intake-Submission-Id"] for m in smtp.messages} == {submission_id}

        deleted = api.delete(f"/v1/submissions/{submission_id}")
        assert deleted.status_code == 204, deleted.text
        assert api.delete(f"/v1/submissions/{submission_id}").status_code == 404
        run_cli(env, "relay", "--once")

    gone = Counter({(path, "submission.deleted"): 1 for path in PATHS})
    assert _events(receiver, secrets) == flagged + created + gone
    for request in receiver.requests[-2:]:
        payload = _verify(secrets[request.path], request)
        assert payload == {
            "type": "submission.deleted",
            "submission_id": submission_id,
            "form_id": setup["form_id"],
            "workspace_id": payload["workspace_id"],
            "deleted_at": payload["deleted_at"],
        }
    assert len(smtp.messages) == len(RECIPIENTS)  # no mail for a deletion
