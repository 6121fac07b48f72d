"""The workspace's forms over the management API: listing them a page at a time, newest
first; creating and changing them under `intake form`'s rules, each bad field named;
pausing, resuming and rotating the public key, whose old value stops at once."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx2
import pytest
from starlette.testclient import TestClient

from intake.adapters.blobs.memory import InMemoryBlobStore
from intake.adapters.memory import FakeChallengeVerifier, FakeClock, SeededIdSource
from intake.adapters.postgres import open_postgres_store
from intake.adapters.ratelimit_memory import InProcessRateLimiter
from intake.config import Settings
from intake.domain.model import Scope
from intake.ports.rate_limiter import RateLimiter
from intake.ports.store import Store
from intake.presentation.views import form_view
from tests.http.conftest import (
    OnBackend,
    Seeded,
    Service,
    assert_error,
)

# Also on PostgreSQL (tests/http/conftest.py): a changed form reaching the form cache
# (LISTEN/NOTIFY).
pytestmark = pytest.mark.postgres_smoke

MESSAGE = {"message": "Hello"}


class Owner:
    """A workspace with a manage key and a read key."""

    def __init__(self, svc: Service, name: str = "Acme") -> None:
        self.svc = svc
        self.workspace_id = svc.workspace(name=name).workspace_id
        self.manage = self._key(Scope.MANAGE)
        self.read = self._key(Scope.READ)

    def _key(self, scope: Scope) -> dict[str, str]:
        created = self.svc.run(
            self.svc.services.keys.create, self.workspace_id, scopes=frozenset({scope})
        )
        return {"authorization": f"Bearer {created.secret}"}

    def get(self, path: str, **params: Any) -> httpx2.Response:
        return self.svc.client.get(path, params=params, headers=self.read)

    def send(self, method: str, path: str, body: Any = None, **kwargs: Any) -> httpx2.Response:
        return self.svc.client.request(method, path, json=body, headers=self.manage, **kwargs)

    def create(self, **body: Any) -> dict[str, Any]:
        response = self.send("POST", "/v1/forms", {"name": "Contact", **body})
        assert response.status_code == 201, response.text
        created: dict[str, Any] = response.json()
        return created

    def stored(self, form_id: str) -> dict[str, object]:
        return form_view(self.svc.run(self.svc.services.forms.get, form_id))


@pytest.fixture
def owner(svc: Service) -> Owner:
    return Owner(svc)


def _fields(response: httpx2.Response) -> dict[str, str]:
    fields: dict[str, str] = assert_error(response, "validation_failed")["error"]["fields"]
    return fields


# -- GET /v1/forms ----------------------------------------------------------------------


def test_the_list_is_the_workspaces_forms_newest_first_in_the_cli_shape(owner: Owner) -> None:
    svc = owner.svc
    made = []
    for name in ("First", "Second", "Third"):
        made.append(owner.create(name=name)["form_id"])
        svc.clock.advance(1)
    Owner(svc, "Other").create(name="Not theirs")

    response = owner.get("/v1/forms")

    assert response.status_code == 200, response.text
    body = response.json()
    assert body["next_cursor"] is None
    assert body["data"] == [owner.stored(form_id) for form_id in reversed(made)]


def test_an_empty_workspace_lists_no_forms(owner: Owner) -> None:
    assert owner.get("/v1/forms").json() == {"data": [], "next_cursor": None}


def test_pages_follow_the_cursor_without_repeating_or_skipping_as_forms_come_and_go(
    owner: Owner,
) -> None:
    svc = owner.svc
    made = []
    for n in range(5):
        made.append(owner.create(name=f"Form {n}")["form_id"])
        svc.clock.advance(1)

    first = owner.get("/v1/forms", limit=2).json()
    owner.create(name="Newer than every page")  # added between pages: not in the next ones
    second = owner.get("/v1/forms", limit=2, cursor=first["next_cursor"]).json()
    third = owner.get("/v1/forms", limit=2, cursor=second["next_cursor"]).json()

    pages = [first, second, third]
    seen = [form["form_id"] for page in pages for form in page["data"]]
    assert seen == list(reversed(made))
    assert [len(page["data"]) for page in pages] == [2, 2, 1]
    assert third["next_cursor"] is None


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"limit": "0"}, "limit"),
        ({"limit": "201"}, "limit"),
        ({"limit": "ten"}, "limit"),
        ({"cursor": "not-a-cursor"}, "cursor"),
        ({"cursor": "eyJhIjoxfQ"}, "cursor"),  # JSON, but no cursor of this listing
        ({"cursor": "x" * 300}, "cursor"),
    ],
)
def test_a_bad_page_parameter_is_named(owner: Owner, params: dict[str, str], field: str) -> None:
    owner.create()

    assert set(_fields(owner.get("/v1/forms", **params))) == {field}


# -- POST /v1/forms ---------------------------------------------------------------------


def test_a_form_is_created_with_every_setting(owner: Owner) -> None:
    body = {
        "name": "  Support  ",
        "mode": "protected",
        "allowed_origins": ["https://www.example.com", "https://EXAMPLE.com:443"],
        "challenge": {"provider": "turnstile", "secret": "0x-secret"},
        "redirect_url": "https://example.com/thanks",
        "rules": [
            {"field": "email", "kind": "email"},
            {"field": "message", "kind": "max_length", "limit": 500},
        ],
        "spam_threshold": 2.5,
        "uploads": {"allowed_types": ["image/*"], "max_files": 2},
    }

    response = owner.send("POST", "/v1/forms", body)

    assert response.status_code == 201, response.text
    created = response.json()
    assert created == owner.stored(created["form_id"])
    assert created["workspace_id"] == owner.workspace_id
    assert created["name"] == "Support"
    assert created["mode"] == "protected"
    assert created["allowed_origins"] == ["https://www.example.com", "https://example.com"]
    assert created["challenge"] == "turnstile"  # the secret is never shown
    assert "0x-secret" not in response.text
    assert created["rules"] == body["rules"]
    assert created["spam_threshold"] == 2.5
    assert created["uploads"]["allowed_types"] == ["image/*"]
    assert created["uploads"]["max_files"] == 2
    assert created["enabled"] is True


def test_a_form_created_with_its_name_alone_takes_the_defaults(owner: Owner) -> None:
    created = owner.create(name="Plain")

    assert created["mode"] == "public"
    assert created["allowed_origins"] == []
    assert created["rules"] == []
    assert created["challenge"] is None
    assert created["redirect_url"] is None
    assert created["uploads"] is None


# Each a body with one bad field, and the field the answer must name.
BAD_FIELDS: list[tuple[dict[str, Any], str]] = [
    ({"name": 5}, "name"),
    ({"name": ""}, "name"),
    ({"name": "   "}, "name"),
    ({"name": "x" * 201}, "name"),
    ({"name": None}, "name"),
    ({"mode": "secret"}, "mode"),
    ({"mode": 1}, "mode"),
    ({"allowed_origins": "https://example.com"}, "allowed_origins"),
    ({"allowed_origins": ["example.com/path"]}, "allowed_origins"),
    ({"allowed_origins": ["ftp://example.com"]}, "allowed_origins"),
    ({"allowed_origins": [1]}, "allowed_origins"),
    ({"challenge": "turnstile"}, "challenge"),
    ({"challenge": {"provider": "captchaland", "secret": "s"}}, "challenge"),
    ({"challenge": {"provider": "turnstile"}}, "challenge"),
    ({"challenge": {"provider": "turnstile", "secret": ""}}, "challenge"),
    ({"challenge": {"provider": "turnstile", "secret": "s", "site": "x"}}, "challenge"),
    ({"redirect_url": "ftp://example.com/thanks"}, "redirect_url"),
    ({"redirect_url": "/thanks"}, "redirect_url"),
    ({"redirect_url": 7}, "redirect_url"),
    ({"rules": "email:email"}, "rules"),
    ({"rules": ["email:email"]}, "rules"),
    ({"rules": [{"field": "email", "kind": "bogus"}]}, "rules"),
    ({"rules": [{"field": "_gotcha", "kind": "required"}]}, "rules"),
    ({"rules": [{"field": "message", "kind": "max_length"}]}, "rules"),
    ({"rules": [{"field": "message", "kind": "max_length", "limit": 0}]}, "rules"),
    ({"rules": [{"field": "message", "kind": "max_length", "limit": "9"}]}, "rules"),
    ({"rules": [{"field": "email", "kind": "email", "limit": 3}]}, "rules"),
    ({"rules": [{"field": " ", "kind": "email"}]}, "rules"),
    ({"rules": [{"field": "email", "kind": "email", "why": "x"}]}, "rules"),
    ({"spam_threshold": 0}, "spam_threshold"),
    ({"spam_threshold": -1.5}, "spam_threshold"),
    ({"spam_threshold": "high"}, "spam_threshold"),
    ({"spam_threshold": True}, "spam_threshold"),
    ({"uploads": True}, "uploads"),
    ({"uploads": {"max_files": 0}}, "uploads"),
    ({"uploads": {"max_files": 10_000}}, "uploads"),
    ({"uploads": {"max_file_size": "10MiB"}}, "uploads"),
    ({"uploads": {"max_file_size": 0}}, "uploads"),
    ({"uploads": {"allowed_types": ["not a type"]}}, "uploads"),
    ({"uploads": {"allowed_types": []}}, "uploads"),
    ({"uploads": {"allowed_types": "image/*"}}, "uploads"),
    ({"uploads": {"enabled": True}}, "uploads"),
    ({"colour": "red"}, "colour"),
]


@pytest.mark.parametrize(
    ("body", "field"), BAD_FIELDS, ids=[f"{f}-{i}" for i, (_, f) in enumerate(BAD_FIELDS)]
)
def test_a_bad_field_of_a_new_form_is_named_and_nothing_is_created(
    owner: Owner, body: dict[str, Any], field: str
) -> None:
    response = owner.send("POST", "/v1/forms", {"name": "Contact", **body})

    assert set(_fields(response)) == {field}
    assert owner.get("/v1/forms").json()["data"] == []


@pytest.mark.parametrize(
    "wildcard",
    [
        "https://*.com",
        "https://*.co.uk",
        "https://*.COM:8443",
        "https://*.github.io",
        "https://*.kawasaki.jp",
        "https://*.xn--p1ai",
        "https://*.localhost",
    ],
)
def test_a_wildcard_over_a_public_suffix_is_refused_naming_its_index(
    owner: Owner, wildcard: str
) -> None:
    body = {"name": "Contact", "allowed_origins": ["https://*.example.com", wildcard]}

    said = _fields(owner.send("POST", "/v1/forms", body))

    assert set(said) == {"allowed_origins"}
    assert said["allowed_origins"].startswith(f"allowed_origins[1] {wildcard!r} covers every")
    assert "allowed_origins[0]" not in said["allowed_origins"]
    assert owner.get("/v1/forms").json()["data"] == []


def test_every_wildcard_too_broad_is_named_in_one_answer(owner: Owner) -> None:
    created = owner.send("POST", "/v1/forms", {"name": "Contact"}).json()
    asked = ["https://*.com", "https://example.org", "https://*.co.uk"]

    answer = owner.send("PATCH", f"/v1/forms/{created['form_id']}", {"allowed_origins": asked})

    said = _fields(answer)["allowed_origins"]
    assert "allowed_origins[0]" in said
    assert "allowed_origins[2]" in said
    assert "allowed_origins[1]" not in said
    assert owner.get(f"/v1/forms/{created['form_id']}").json()["allowed_origins"] == []


def test_a_wildcard_over_a_registered_domain_is_taken(owner: Owner) -> None:
    asked = ["https://*.example.com", "https://*.example.co.uk", "https://*.city.kawasaki.jp"]

    created = owner.send("POST", "/v1/forms", {"name": "Contact", "allowed_origins": asked})

    assert created.status_code == 201, created.text
    assert created.json()["allowed_origins"] == asked


def test_a_new_form_needs_a_name(owner: Owner) -> None:
    assert set(_fields(owner.send("POST", "/v1/forms", {"mode": "public"}))) == {"name"}


def test_every_bad_field_is_named_at_once(owner: Owner) -> None:
    body = {
        "name": "",
        "mode": "secret",
        "allowed_origins": ["nope"],
        "redirect_url": "nope",
        "rules": [{"field": "email", "kind": "bogus"}],
        "spam_threshold": 0,
        "challenge": {"provider": "nope", "secret": "s"},
    }

    assert set(_fields(owner.send("POST", "/v1/forms", body))) == set(body)


def test_unknown_fields_are_named_with_every_bad_field_in_one_answer(owner: Owner) -> None:
    body = {
        "name": "",
        "mode": "secret",
        "spam_threshold": 0,
        "colour": "red",
        "owner": "me",
    }

    named = _fields(owner.send("POST", "/v1/forms", body))

    assert set(named) == {"name", "mode", "spam_threshold", "colour", "owner"}
    assert named["colour"] == named["owner"] == "Unknown field."
    assert owner.get("/v1/forms").json()["data"] == []


def test_a_change_names_unknown_and_bad_fields_at_once(owner: Owner) -> None:
    created = owner.send("POST", "/v1/forms", {"name": "Contact"})
    form_id = created.json()["form_id"]

    answer = owner.send(
        "PATCH", f"/v1/forms/{form_id}", {"enabled": "yes", "mode": 3, "colour": "red"}
    )

    assert set(_fields(answer)) == {"enabled", "mode", "colour"}
    assert owner.get(f"/v1/forms/{form_id}").json()["enabled"] is True


def test_a_body_that_is_not_a_json_object_is_refused(owner: Owner) -> None:
    svc = owner.svc
    as_text = {**owner.manage, "content-type": "text/plain"}
    as_json = {**owner.manage, "content-type": "application/json"}

    assert_error(
        svc.client.post("/v1/forms", content=b'{"name": "x"}', headers=as_text),
        "unsupported_content_type",
    )
    assert_error(
        svc.client.post("/v1/forms", content=b'{"name": ', headers=as_json), "malformed_request"
    )
    assert_error(svc.client.post("/v1/forms", content=b"[]", headers=as_json), "malformed_request")
    assert owner.get("/v1/forms").json()["data"] == []


# -- GET and PATCH /v1/forms/{form_id} --------------------------------------------------


def test_a_form_is_read_by_its_id(owner: Owner) -> None:
    form_id = owner.create()["form_id"]

    response = owner.get(f"/v1/forms/{form_id}")

    assert response.status_code == 200, response.text
    assert response.json() == owner.stored(form_id)


def test_a_missing_form_is_not_found(owner: Owner) -> None:
    response = owner.get("/v1/forms/frm_missing0000000000")

    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


def test_a_change_sets_only_the_fields_given(owner: Owner) -> None:
    created = owner.create(
        allowed_origins=["https://example.com"],
        rules=[{"field": "email", "kind": "required"}],
        challenge={"provider": "hcaptcha", "secret": "s"},
        redirect_url="https://example.com/thanks",
    )
    form_id = created["form_id"]

    response = owner.send(
        "PATCH",
        f"/v1/forms/{form_id}",
        {"name": "Renamed", "rules": [{"field": "email", "kind": "email"}], "challenge": None},
    )

    assert response.status_code == 200, response.text
    changed = response.json()
    assert changed == owner.stored(form_id)
    assert changed["name"] == "Renamed"
    assert changed["rules"] == [{"field": "email", "kind": "email"}]  # the list replaced
    assert changed["challenge"] is None
    assert changed["allowed_origins"] == ["https://example.com"]  # not given: kept
    assert changed["redirect_url"] == "https://example.com/thanks"
    assert changed["public_form_key"] == created["public_form_key"]


def test_null_and_empty_lists_clear_what_they_name(owner: Owner) -> None:
    form_id = owner.create(
        allowed_origins=["https://example.com"],
        redirect_url="https://example.com/thanks",
        uploads={},
    )["form_id"]

    response = owner.send(
        "PATCH",
        f"/v1/forms/{form_id}",
        {"allowed_origins": [], "redirect_url": None, "uploads": None},
    )

    changed = response.json()
    assert (changed["allowed_origins"], changed["redirect_url"], changed["uploads"]) == (
        [],
        None,
        None,
    )


def test_enabled_false_pauses_the_form_and_true_resumes_it(owner: Owner) -> None:
    svc = owner.svc
    created = owner.create()
    form_id, key = created["form_id"], created["public_form_key"]

    paused = owner.send("PATCH", f"/v1/forms/{form_id}", {"enabled": False})
    assert (paused.json()["enabled"], paused.json()["state"]) == (False, "paused")
    assert_error(svc.public(key, json=MESSAGE), "form_disabled")

    resumed = owner.send("PATCH", f"/v1/forms/{form_id}", {"enabled": True})
    assert (resumed.json()["enabled"], resumed.json()["state"]) == (True, "enabled")
    assert svc.public(key, json=MESSAGE).status_code == 201


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"enabled": "no"}, "enabled"),
        ({"enabled": None}, "enabled"),
        ({"name": None}, "name"),
        ({"allowed_origins": None}, "allowed_origins"),
        ({"spam_threshold": None}, "spam_threshold"),
        ({"uploads": {"max_files": -1}}, "uploads"),
        ({"rules": [{"field": "_next", "kind": "url"}]}, "rules"),
        ({"redirect_url": "javascript:alert(1)"}, "redirect_url"),
        ({"public_form_key": "mine"}, "public_form_key"),
        ({"workspace_id": "ws_other"}, "workspace_id"),
    ],
)
def test_a_bad_change_is_named_and_changes_nothing(
    owner: Owner, body: dict[str, Any], field: str
) -> None:
    form_id = owner.create()["form_id"]
    before = owner.stored(form_id)

    response = owner.send("PATCH", f"/v1/forms/{form_id}", body)

    assert set(_fields(response)) == {field}
    assert owner.stored(form_id) == before


def test_a_read_key_changes_nothing(owner: Owner) -> None:
    form_id = owner.create()["form_id"]
    before = owner.stored(form_id)

    response = owner.svc.client.patch(
        f"/v1/forms/{form_id}", json={"enabled": False}, headers=owner.read
    )

    assert response.status_code == 403
    assert owner.stored(form_id) == before


# -- POST /v1/forms/{form_id}/rotate-key ------------------------------------------------


def test_a_rotated_key_stops_resolving_at_once(seeded: Seeded) -> None:
    svc = seeded.svc
    owner_key = svc.run(
        svc.services.keys.create, seeded.workspace.workspace_id, scopes=frozenset({Scope.MANAGE})
    )
    old_key = seeded.form.public_form_key
    assert svc.public(old_key, json=MESSAGE).status_code == 201  # resolved, and cached

    response = svc.client.post(
        f"/v1/forms/{seeded.form.form_id}/rotate-key",
        headers={"authorization": f"Bearer {owner_key.secret}"},
    )

    assert response.status_code == 200, response.text
    new_key = response.json()["public_form_key"]
    assert new_key != old_key
    assert response.json() == form_view(svc.run(svc.services.forms.get, seeded.form.form_id))
    assert_error(svc.public(old_key, json=MESSAGE), "form_not_found")
    assert svc.public(new_key, json=MESSAGE).status_code == 201


class _SameDatabase:
    """A second serving process on the PostgreSQL database the test's service uses, with
    a store, form cache and listener of its own; it empties nothing."""

    def __init__(self, url: str) -> None:
        self._url = url

    @asynccontextmanager
    async def open(self) -> AsyncIterator[tuple[Store, RateLimiter]]:
        store = await open_postgres_store(self._url, min_size=1, max_size=2)
        try:
            yield store, InProcessRateLimiter()
        finally:
            await store.close()


@pytest.mark.parametrize(
    "backend", [pytest.param("postgres", marks=pytest.mark.services)], indirect=True
)
def test_a_rotated_key_stops_at_once_on_every_serving_process(
    seeded: Seeded, postgres_url: str
) -> None:
    svc = seeded.svc
    manager = svc.run(
        svc.services.keys.create, seeded.workspace.workspace_id, scopes=frozenset({Scope.MANAGE})
    )
    old_key = seeded.form.public_form_key
    second = OnBackend(
        _SameDatabase(postgres_url),
        Settings(),
        clock=FakeClock(),
        id_source=SeededIdSource(seed=7),
        challenge=FakeChallengeVerifier(),
        blobs=InMemoryBlobStore(),
    )
    with TestClient(second) as elsewhere:
        # The other process has resolved the key, and may hold it in its form cache.
        for _ in range(3):
            assert elsewhere.post(f"/f/{old_key}", json=MESSAGE).status_code == 201

        rotated = svc.client.post(
            f"/v1/forms/{seeded.form.form_id}/rotate-key",
            headers={"authorization": f"Bearer {manager.secret}"},
        )
        assert rotated.status_code == 200, rotated.text

        refused = elsewhere.post(f"/f/{old_key}", json=MESSAGE)
        assert refused.status_code == 404, refused.text
        assert refused.json()["error"]["code"] == "form_not_found"
        new_key = rotated.json()["public_form_key"]
        assert elsewhere.post(f"/f/{new_key}", json=MESSAGE).status_code == 201


# -- text no store could keep -----------------------------------------------------------

UNSTORABLE: list[tuple[str, Any]] = [
    ("name", "Con\x00tact"),
    ("name", "\ud800"),
    ("redirect_url", "https://example.com/\x00"),
    ("challenge", {"provider": "turnstile", "secret": "0x\x00"}),
    ("rules", [{"field": "em\x00ail", "kind": "email"}]),
    ("allowed_origins", ["https://\udfffexample.com"]),
]


@pytest.mark.parametrize(("field", "value"), UNSTORABLE)
def test_text_with_nul_or_a_lone_surrogate_is_named_not_stored(
    owner: Owner, field: str, value: Any
) -> None:
    body = json.dumps({"name": "Contact", field: value}).encode()
    headers = {**owner.manage, "content-type": "application/json"}

    created = owner.svc.client.post("/v1/forms", content=body, headers=headers)
    form_id = owner.create()["form_id"]
    changed = owner.svc.client.patch(f"/v1/forms/{form_id}", content=body, headers=headers)

    assert set(_fields(created)) == {field}
    assert set(_fields(changed)) == {field}


@pytest.mark.parametrize("form_id", ["frm_a%00b", "x" * 500, "frm_%E2%80%8B"])
@pytest.mark.parametrize("method", ["GET", "PATCH", "POST"])
def test_an_id_no_form_could_have_is_not_found(owner: Owner, form_id: str, method: str) -> None:
    path = f"/v1/forms/{form_id}" + ("/rotate-key" if method == "POST" else "")
    body = {"name": "x"} if method == "PATCH" else None

    response = owner.send(method, path, body)

    assert response.status_code == 404, response.text
    assert response.json()["error"]["code"] == "not_found"
