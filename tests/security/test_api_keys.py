"""API keys: another workspace's key, revoked keys, malformed credentials and timing.

A key reaches only its own workspace's forms: another workspace's form id answers
exactly as a form id that does not exist (spec 4.2). Every bad credential (none, a
malformed header, another scheme, an unknown key, a wrong key with the right prefix, a
revoked key) gets one and the same 401. And nothing in how long a refusal takes tells
an unknown key from one that exists: the key is looked up by the hash of the whole
secret, and compared with hmac.compare_digest.
"""

from __future__ import annotations

import ast
import hashlib
import hmac
import inspect
import random
import statistics
import textwrap
import time
from collections.abc import Callable
from datetime import datetime
from typing import Any

import httpx2
import pytest
from starlette.testclient import TestClient

from intake.domain import ids
from intake.domain.model import ApiKey, FormMode
from intake.ports.api_keys import ApiKeyRepository
from intake.service.api_access import live_key
from tests.cli.conftest import Cli
from tests.http.conftest import Seeded, Service, assert_error

FIELDS = {"name": "Ada", "message": "Hello"}
# Ignored when two answers are compared: they differ on every answer by design.
PER_ANSWER = {"x-request-id", "date"}


def _comparable(response: httpx2.Response) -> tuple[int, dict[str, Any], list[tuple[str, str]]]:
    body = {**response.json(), "request_id": None}
    headers = sorted((k, v) for k, v in response.headers.items() if k not in PER_ANSWER)
    return response.status_code, body, headers


def _well_formed_unknown() -> str:
    return ids.api_key(random.randbytes(ids.API_KEY_RANDOM_BYTES))


def _tweak_last(secret: str) -> str:
    last = secret[-1]
    return secret[:-1] + ("1" if last != "1" else "2")


@pytest.fixture
def two(svc: Service) -> tuple[Seeded, Seeded]:
    """Two workspaces, each with a form and a key."""
    return Seeded(svc), Seeded(svc)


def test_every_kind_of_bad_credential_gets_the_same_401(two: tuple[Seeded, Seeded]) -> None:
    a, b = two
    revoked = a.svc.api_key(a.workspace.workspace_id)
    a.svc.run(a.svc.services.keys.revoke, revoked.key.key_id)
    valid = a.key.secret
    b_revoked = b.svc.api_key(b.workspace.workspace_id)
    b.svc.run(b.svc.services.keys.revoke, b_revoked.key.key_id)
    credentials: dict[str, str | None] = {
        "no header": None,
        "empty": "",
        "scheme only": "Bearer",
        "scheme and space": "Bearer ",
        "basic auth": "Basic dXNlcjpwYXNzd29yZA==",
        "another scheme": f"Token {valid}",
        "no scheme": valid,
        "trailing junk": f"Bearer {valid}x",
        "one character short": f"Bearer {valid[:-1]}",
        "upper case": f"Bearer {valid.upper()}",
        "prefix only": f"Bearer {ids.API_KEY_PREFIX}",
        "unknown well-formed key": f"Bearer {_well_formed_unknown()}",
        "wrong key with the valid prefix": f"Bearer {_tweak_last(valid)}",
        "revoked key": f"Bearer {revoked.secret}",
        "another workspace's revoked key": f"Bearer {b_revoked.secret}",
        "two keys": f"Bearer {valid} {valid}",
        "very long": "Bearer " + "a" * 8_000,
    }

    answers = {
        name: a.svc.server(
            a.form.form_id,
            None,
            headers={} if value is None else {"authorization": value},
            data=FIELDS,
        )
        for name, value in credentials.items()
    }

    for name, response in answers.items():
        assert_error(response, "unauthorized")
        assert response.headers["www-authenticate"] == "Bearer", name
    reference = _comparable(answers["no header"])
    for name, response in answers.items():
        assert _comparable(response) == reference, name
    assert a.svc.stored() == (0, 0)


def test_a_valid_key_of_another_workspace_cannot_tell_its_form_from_a_missing_one(
    two: tuple[Seeded, Seeded],
) -> None:
    a, b = two

    elsewhere = a.svc.server(a.form.form_id, b.key.secret, data=FIELDS)
    missing = a.svc.server("frm_" + "0" * 26, b.key.secret, data=FIELDS)

    assert_error(elsewhere, "form_not_found")
    assert _comparable(elsewhere) == _comparable(missing)
    assert a.svc.stored() == (0, 0)
    # The owner's own key still reaches it: the refusal was about the key's workspace.
    assert a.svc.server(a.form.form_id, a.key.secret, data=FIELDS).status_code == 201


def test_a_protected_form_of_another_workspace_is_not_found_either(
    two: tuple[Seeded, Seeded],
) -> None:
    a, b = two
    a.svc.update_form(a.form.form_id, mode=FormMode.PROTECTED)

    response = a.svc.server(a.form.form_id, b.key.secret, data=FIELDS)

    assert_error(response, "form_not_found")
    assert a.svc.stored() == (0, 0)


def test_a_revoked_key_of_another_workspace_is_unauthorized_before_any_form_is_looked_up(
    two: tuple[Seeded, Seeded],
) -> None:
    a, b = two
    b.svc.run(b.svc.services.keys.revoke, b.key.key.key_id)

    on_a = a.svc.server(a.form.form_id, b.key.secret, data=FIELDS)
    on_missing = a.svc.server("frm_" + "0" * 26, b.key.secret, data=FIELDS)

    assert_error(on_a, "unauthorized")
    assert _comparable(on_a) == _comparable(on_missing)


# -- revoking with the command line ----------------------------------------------------------


def _server_post(http: TestClient, form_id: str, secret: str) -> httpx2.Response:
    return http.post(
        f"/v1/forms/{form_id}/submissions",
        json=FIELDS,
        headers={"authorization": f"Bearer {secret}"},
    )


def test_a_key_revoked_with_the_command_line_is_refused_on_the_very_next_request(
    cli: Cli, http: TestClient
) -> None:
    workspace_id = cli.json("workspace", "create", "--name", "Acme")["workspace_id"]
    form_id = cli.json("form", "create", "--workspace", workspace_id)["form_id"]
    created = cli.json("key", "create", "--workspace", workspace_id)
    before = _server_post(http, form_id, created["api_key"])

    cli.json("key", "revoke", created["key_id"])
    after = _server_post(http, form_id, created["api_key"])

    assert before.status_code == 201
    assert after.status_code == 401
    assert after.json()["error"]["code"] == "unauthorized"
    assert after.headers["www-authenticate"] == "Bearer"
    keys = cli.json("key", "list", "--workspace", workspace_id)["keys"]
    assert [k["key_id"] for k in keys] == [created["key_id"]]
    assert keys[0]["revoked"] is True
    assert created["api_key"] not in repr(keys)  # only ever the prefix


def test_command_line_listings_by_workspace_show_only_that_workspace(
    cli: Cli, http: TestClient
) -> None:
    a = cli.json("workspace", "create", "--name", "A")["workspace_id"]
    b = cli.json("workspace", "create", "--name", "B")["workspace_id"]
    form_a = cli.json("form", "create", "--workspace", a)
    form_b = cli.json("form", "create", "--workspace", b)
    key_a = cli.json("key", "create", "--workspace", a)
    key_b = cli.json("key", "create", "--workspace", b)
    assert _server_post(http, form_a["form_id"], key_a["api_key"]).status_code == 201

    forms = cli.json("form", "list", "--workspace", b)["forms"]
    keys = cli.json("key", "list", "--workspace", b)["keys"]
    listed = cli.json("submissions", "list", "--form", form_b["form_id"])["submissions"]

    assert [f["form_id"] for f in forms] == [form_b["form_id"]]
    assert [k["key_id"] for k in keys] == [key_b["key_id"]]
    assert listed == []


# -- how a key is found and compared ----------------------------------------------------------


class RecordingKeys:
    """The API key repository, with every call it gets written down."""

    def __init__(self, inner: ApiKeyRepository) -> None:
        self.inner = inner
        self.calls: list[tuple[str, object]] = []

    async def add(self, key: ApiKey) -> None:
        self.calls.append(("add", key.key_id))
        await self.inner.add(key)

    async def find_by_hash(self, key_hash: bytes) -> ApiKey | None:
        self.calls.append(("find_by_hash", key_hash))
        return await self.inner.find_by_hash(key_hash)

    async def get(self, key_id: str) -> ApiKey | None:
        self.calls.append(("get", key_id))
        return await self.inner.get(key_id)

    async def revoke(self, key_id: str, when: datetime) -> bool:
        self.calls.append(("revoke", key_id))
        return await self.inner.revoke(key_id, when)

    async def list(self, workspace_id: str) -> list[ApiKey]:
        self.calls.append(("list", workspace_id))
        return await self.inner.list(workspace_id)


def test_a_key_is_looked_up_by_the_hash_of_the_whole_secret_and_compared_in_constant_time(
    two: tuple[Seeded, Seeded], monkeypatch: pytest.MonkeyPatch
) -> None:
    a, _ = two
    revoked = a.svc.api_key(a.workspace.workspace_id)
    a.svc.run(a.svc.services.keys.revoke, revoked.key.key_id)
    recording = RecordingKeys(a.svc.store.api_keys)
    a.svc.store.api_keys = recording
    compared: list[tuple[bytes, bytes]] = []
    real_compare = hmac.compare_digest

    def spy(x: Any, y: Any) -> bool:
        compared.append((x, y))
        return real_compare(x, y)

    monkeypatch.setattr(hmac, "compare_digest", spy)
    unknown = _well_formed_unknown()
    presented = [a.key.secret, revoked.secret, unknown, _tweak_last(a.key.secret)]

    statuses = [a.svc.server(a.form.form_id, s, data=FIELDS).status_code for s in presented]
    a.svc.server(a.form.form_id, "not-a-key", data=FIELDS)

    assert statuses == [201, 401, 401, 401]
    digests = [hashlib.sha256(s.encode()).digest() for s in presented]
    # One lookup per well-formed key, by the full digest; none for a malformed one, and
    # never by a prefix or a listing that would be compared in Python.
    assert recording.calls == [("find_by_hash", d) for d in digests]
    # Each key found is compared with compare_digest, digest against digest.
    assert compared == [(d, d) for d in digests[:2]]


def test_authentication_holds_no_comparison_that_could_stop_at_the_first_differing_byte() -> None:
    source = textwrap.dedent(inspect.getsource(live_key))
    tree = ast.parse(source)
    compares = [node for node in ast.walk(tree) if isinstance(node, ast.Compare)]
    for node in compares:
        for op, right in zip(node.ops, node.comparators, strict=True):
            if isinstance(op, ast.Eq | ast.NotEq | ast.Lt | ast.Gt | ast.LtE | ast.GtE):
                # Only the scheme is compared with `==`/`!=`, against a constant.
                assert isinstance(right, ast.Constant), ast.unparse(node)
    calls = {ast.unparse(node.func) for node in ast.walk(tree) if isinstance(node, ast.Call)}
    assert "ids.same_hash" in calls
    assert "keys.find_by_hash" in calls
    assert not any("startswith" in call or "find(" in call for call in calls)
    same_hash = ast.parse(textwrap.dedent(inspect.getsource(ids.same_hash)))
    used = {ast.unparse(node.func) for node in ast.walk(same_hash) if isinstance(node, ast.Call)}
    assert used == {"hmac.compare_digest"}


# -- timing -----------------------------------------------------------------------------------

SAMPLES = 300  # per kind, interleaved


def _medians(
    kinds: dict[str, Callable[[], httpx2.Response]], expected: dict[str, int]
) -> dict[str, float]:
    """Median seconds per kind over SAMPLES requests each, the kinds shuffled together in
    every round so that whatever else the machine does falls on all of them alike."""
    for _ in range(20):  # warm up caches, connections and code paths
        for name, call in kinds.items():
            assert call().status_code == expected[name]
    times: dict[str, list[float]] = {name: [] for name in kinds}
    order = list(kinds)
    shuffle = random.Random(7)
    for _ in range(SAMPLES):
        shuffle.shuffle(order)
        for name in order:
            started = time.perf_counter()
            response = kinds[name]()
            times[name].append(time.perf_counter() - started)
            assert response.status_code == expected[name]
    return {name: statistics.median(samples) for name, samples in times.items()}


def _close(a: float, b: float) -> bool:
    # Generous: a real leak (a slow hash for keys that exist, a second query) costs far
    # more than this; scheduling noise on a busy machine costs less once medians are taken.
    return abs(a - b) <= 0.25 * max(a, b) + 0.0005


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["memory", "sqlite"], indirect=True)
def test_refusals_take_as_long_for_keys_that_exist_as_for_keys_that_do_not(
    two: tuple[Seeded, Seeded],
) -> None:
    a, b = two
    revoked = a.svc.api_key(a.workspace.workspace_id)
    a.svc.run(a.svc.services.keys.revoke, revoked.key.key_id)
    unknown = [_well_formed_unknown() for _ in range(SAMPLES + 20)]
    body = b"name=Ada"
    form_type = {"content-type": "application/x-www-form-urlencoded"}
    missing_form = "frm_" + "0" * 26

    def post(form_id: str, secret: str) -> httpx2.Response:
        return a.svc.server(form_id, secret, content=body, headers=form_type)

    kinds: dict[str, Callable[[], httpx2.Response]] = {
        "unknown key": lambda: post(a.form.form_id, unknown.pop()),
        "revoked key": lambda: post(a.form.form_id, revoked.secret),
        "other workspace's form": lambda: post(a.form.form_id, b.key.secret),
        "missing form": lambda: post(missing_form, b.key.secret),
    }
    expected = {
        "unknown key": 401,
        "revoked key": 401,
        "other workspace's form": 404,
        "missing form": 404,
    }

    # The suite's OpenAPI check of every answer would only add noise to the clock.
    a.svc.client.event_hooks = {"request": [], "response": []}
    medians = _medians(kinds, expected)

    assert _close(medians["unknown key"], medians["revoked key"]), medians
    assert _close(medians["other workspace's form"], medians["missing form"]), medians
