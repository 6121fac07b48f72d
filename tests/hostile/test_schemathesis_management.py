"""schemathesis over every operation of the management API (/v1), on a running `intake
serve` with a SQLite database, as test_schemathesis.py does for the submission endpoints.

The workspace is seeded with the `intake` command (a form, webhook endpoints, a mail
recipient, keys of each scope) and over HTTP (a submission, and a delivery from a webhook
test), and one round of `intake relay` gives the deliveries failed attempts to show. The
seed's webhook test goes to an endpoint of its own: tests to one destination are
throttled (one a minute), and the endpoint the cases test must still take its first.
Path parameters are those real ids most of the time and generated ones otherwise; the
Authorization header carries a `manage` key most of the time, else a `read` key, a
`submit` key, an unknown key or none. Requests are valid by the document and, some of
the time, invalid by it. Every answer must be one the document describes (status,
content type, headers, body schema) and never a server error, and every operation must
be reached: some answer of each is not a refusal of the key or the id.

The operations run are those of the management API's table (CONTRACT, which
test_management_openapi.py holds the document and the routes to), each once. They run in
one order, erasures last, so that the deletions of the seeded objects come after every
other operation has had them, and the form's deletion, which takes the rest with it,
last of all.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
import requests
import schemathesis
from attrs import frozen
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.core.result import Ok

from tests.hostile.live import environment, seed, serving
from tests.hostile.test_schemathesis import AnyCase, Live, Operation, _run
from tests.http.test_management_openapi import CONTRACT
from tests.support.processes import free_port, run_cli

pytestmark = pytest.mark.slow

EXAMPLES = 25
# The key's rate limit (100 requests in 10 s) would answer most cases with a 429; each
# case picks one of several keys, so the windows of each stay well short of it.
MANAGE_KEYS = 6
FORM_DELETION = ("DELETE", "/v1/forms/{form_id}")
# Answers that do not tell whether the operation itself ran.
REFUSALS = {401, 403, 404, 429}
# Bodies a generator would almost never come upon: a URL the webhook rule takes, an
# address.
GOOD_BODIES: dict[tuple[str, str], dict[str, Any]] = {
    ("/v1/forms/{form_id}/webhooks", "POST"): {"url": "https://hooks.example.com/intake"},
    ("/v1/forms/{form_id}/notifications", "POST"): {"email": "team@example.com"},
    ("/v1/forms/{form_id}/destinations", "POST"): {
        "kind": "slack",
        "url": "https://hooks.example.com/slack",
    },
    ("/v1/submissions/{submission_id}", "PATCH"): {"status": "spam"},
}


@frozen
class Workspace:
    """The ids of one of each object, and keys of each scope."""

    ids: dict[str, str]
    manage_keys: tuple[str, ...]
    read_key: str
    submit_key: str


@frozen
class Served:
    live: Live
    workspace: Workspace


def _seed_objects(env: dict[str, str], form_id: str) -> dict[str, str]:
    # Nothing listens there: each delivery the relay tries fails, and says so.
    url = f"http://127.0.0.1:{free_port()}/hook"
    endpoint = run_cli(env, "webhook", "add", "--form", form_id, "--url", url)
    seed_endpoint = run_cli(env, "webhook", "add", "--form", form_id, "--url", f"{url}/seed")
    recipient = run_cli(env, "notify", "add", "--form", form_id, "--email", "ops@example.com")
    chat = run_cli(
        env, "destination", "add", "--form", form_id, "--kind", "slack", "--url", f"{url}/slack"
    )
    return {
        "form_id": form_id,
        "endpoint_id": endpoint["endpoint_id"],
        "seed_endpoint_id": seed_endpoint["endpoint_id"],
        "recipient_id": recipient["recipient_id"],
        "destination_id": chat["destination_id"],
    }


def _seed_over_http(base_url: str, workspace: Workspace) -> dict[str, str]:
    """A submission, and a delivery: a webhook test's, to the endpoint the cases leave
    alone, so that the one they test is not throttled before they start."""
    ids = workspace.ids
    submitted = requests.post(
        f"{base_url}/v1/forms/{ids['form_id']}/submissions",
        json={"email": "ada@example.com", "message": "Hello"},
        headers={"Authorization": f"Bearer {workspace.submit_key}"},
        timeout=15,
    )
    assert submitted.status_code == 201, submitted.text
    tested = requests.post(
        f"{base_url}/v1/webhooks/{ids['seed_endpoint_id']}/test",
        headers={"Authorization": f"Bearer {workspace.manage_keys[0]}"},
        timeout=15,
    )
    assert tested.status_code == 202, tested.text
    return {
        "submission_id": submitted.json()["submission_id"],
        "delivery_id": tested.json()["delivery_id"],
    }


def _assert_attempts_shown(base_url: str, workspace: Workspace) -> None:
    listed = requests.get(
        f"{base_url}/v1/webhooks/{workspace.ids['endpoint_id']}/deliveries",
        headers={"Authorization": f"Bearer {workspace.read_key}"},
        timeout=15,
    )
    assert listed.status_code == 200, listed.text
    assert any(delivery["attempt_log"] for delivery in listed.json()["data"]), listed.text


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    directory = tmp_path_factory.mktemp("schemathesis_management")
    env = environment(directory / "intake.db", INTAKE_WEBHOOK_ALLOW_PRIVATE="1")
    seeds = seed(env)
    form = run_cli(env, "form", "show", seeds.public_form_id)
    ws = form["workspace_id"]

    def key(*scopes: str) -> str:
        argv = [arg for scope in scopes for arg in ("--scope", scope)]
        created = run_cli(env, "key", "create", "--workspace", ws, *argv)
        return str(created["api_key"])

    workspace = Workspace(
        ids=_seed_objects(env, seeds.public_form_id),
        manage_keys=tuple(key("manage") for _ in range(MANAGE_KEYS)),
        read_key=key("read"),
        submit_key=seeds.api_key,
    )
    log = directory / "serve.log"
    with serving(env, log) as base_url:
        workspace.ids.update(_seed_over_http(base_url, workspace))
        # One round of the relay: the deliveries then have attempts to show.
        run_cli(env, "relay", "--once")
        _assert_attempts_shown(base_url, workspace)
        yield Served(Live(base_url, seeds, log), workspace)
    text = log.read_text(errors="replace")
    assert "Traceback" not in text, text[-4000:]
    assert "unhandled error" not in text, text[-4000:]


def _management_operations(schema: schemathesis.BaseSchema) -> list[Operation]:
    results = list(schema.get_all_operations())
    operations = [result.ok() for result in results if isinstance(result, Ok)]
    assert len(operations) == len(results), "an operation of the document is invalid"
    # The submission endpoint names its scope too (`submit`); it has runs of its own.
    managed = [
        op for op in operations if op.definition.raw.get("x-scopes", ["submit"]) != ["submit"]
    ]
    # Erasures last, so that every other operation has had the seeded objects; the
    # form's last of all, as it takes its submissions and destinations with it.
    return sorted(
        managed,
        key=lambda op: (
            op.method.upper() == "DELETE",
            (op.method.upper(), op.path) == FORM_DELETION,
            op.path,
            op.method,
        ),
    )


def _cases(operation: Operation, ids: dict[str, str]) -> st.SearchStrategy[AnyCase]:
    names = [p.name for p in operation.path_parameters]
    real = {name: ids[name] for name in names}
    good = GOOD_BODIES.get((operation.path, operation.method.upper()))

    def with_good_body(case: AnyCase) -> AnyCase:
        case.body = good
        return case

    strategies = [
        operation.as_strategy(path_parameters=real),
        operation.as_strategy(path_parameters=real),
        operation.as_strategy(generation_mode=GenerationMode.NEGATIVE, path_parameters=real),
        operation.as_strategy(),
    ]
    if good is not None:
        strategies.append(operation.as_strategy(path_parameters=real).map(with_good_body))
    return st.one_of(*strategies)


def _authorizations(workspace: Workspace) -> st.SearchStrategy[str | None]:
    manage = [f"Bearer {key}" for key in workspace.manage_keys]
    return st.sampled_from(
        [
            *manage,
            *manage,
            f"Bearer {workspace.read_key}",
            f"Bearer {workspace.submit_key}",
            "Bearer intake_sk_unknown",
            None,
        ]
    )


def test_every_management_operation_answers_as_documented(served: Served) -> None:
    schema = schemathesis.openapi.from_url(f"{served.live.base_url}/openapi.json")
    operations = _management_operations(schema)
    methods_and_paths = [(op.method.upper(), op.path) for op in operations]
    # Every operation of the table, each documented once and under one operationId.
    assert sorted(methods_and_paths) == sorted(CONTRACT), [op.label for op in operations]
    operation_ids = [op.definition.raw["operationId"] for op in operations]
    assert len(set(operation_ids)) == len(operation_ids), sorted(operation_ids)
    failures: dict[str, str] = {}
    reached: dict[str, Counter[int]] = {}

    for operation in operations:
        try:
            statuses = _run(
                served.live,
                _cases(operation, served.workspace.ids),
                _authorizations(served.workspace),
                examples=EXAMPLES,
            )
        except Exception as failure:  # every operation is tried, then all are told
            failures[operation.label] = str(failure)[:2000]
            continue
        reached[operation.label] = statuses
        if not set(statuses) - REFUSALS:
            failures[operation.label] = f"never reached: {dict(statuses)}"

    # What each operation answered, for whoever reads the run (pytest -s).
    for label, statuses in reached.items():
        print(f"{label}: {dict(sorted(statuses.items()))}")
    assert not failures, "\n\n".join(f"{label}: {why}" for label, why in failures.items())
