"""The dashboard's settings page: a workspace's API keys (owners create and revoke, a new
key shown once), its plan and month's usage as /v1/usage counts it, the workspace chosen
among the user's; on every store."""

from __future__ import annotations

import logging
import re

import httpx2
import pytest

from intake.domain.model import Scope
from intake.domain.users import Role
from intake.entrypoints.http.dashboard import settings
from tests.http.conftest import ServiceFactory
from tests.http.dashboard_support import Dashboard, isolated

SETTINGS = "/dashboard/settings"
KEY = re.compile(r'<code class="secret">([^<]+)</code>')
PREFIX = re.compile(r"<td><code>(intake_sk_\w+)…</code></td>")


@pytest.fixture
def dash(make_service: ServiceFactory) -> Dashboard:
    return Dashboard(make_service())


def _owner(dash: Dashboard) -> None:
    dash.set_password(dash.link("owner@example.com"))


def _member(dash: Dashboard) -> None:
    dash.new_browser()
    dash.set_password(dash.link("member@example.com", Role.MEMBER))


def _create(
    dash: Dashboard, scopes: list[str], workspace: str | None = None, **headers: str
) -> httpx2.Response:
    return dash.client.post(
        SETTINGS + "/keys",
        data={
            "csrf": dash.csrf(SETTINGS),
            "workspace": workspace or dash.workspace.workspace_id,
            "scopes": scopes,
        },
        headers=headers,
    )


def _revoke(
    dash: Dashboard, key_id: str, confirm: bool, workspace: str | None = None
) -> httpx2.Response:
    data = {
        "csrf": dash.csrf(SETTINGS),
        "workspace": workspace or dash.workspace.workspace_id,
        "key": key_id,
    }
    if confirm:
        data["confirm"] = "yes"
    return dash.client.post(SETTINGS + "/keys/revoke", data=data)


def _keys(dash: Dashboard) -> list[tuple[str, frozenset[Scope], bool]]:
    keys = dash.svc.run(dash.svc.services.keys.all, dash.workspace.workspace_id)
    return [(k.key_id, k.scopes, k.revoked) for k in keys]


def test_an_owner_creates_a_key_shown_once_that_works(
    dash: Dashboard, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    _owner(dash)

    posted = _create(dash, ["read", "manage"])

    # Post, redirect, get: the page it leads to shows the key, once.
    assert posted.status_code == 303
    [(key_id, _, _)] = _keys(dash)
    assert key_id in posted.headers["location"]
    created = dash.client.get(posted.headers["location"])
    assert created.status_code == 200
    assert created.headers["cache-control"] == "no-store"
    found = KEY.search(created.text)
    assert found is not None
    secret = found.group(1)
    [(_, scopes, revoked)] = _keys(dash)
    assert scopes == {Scope.READ, Scope.MANAGE}
    assert not revoked
    usage = dash.client.get("/v1/usage", headers={"authorization": f"Bearer {secret}"})
    assert usage.status_code == 200
    page = dash.client.get(SETTINGS)
    assert secret not in page.text  # never again
    assert secret[:12] in page.text  # its prefix is listed
    assert "read, manage" in page.text
    assert 'href="/dashboard/settings/members"' in page.text
    assert secret not in caplog.text
    assert secret not in posted.headers["location"]
    reloaded = dash.client.get(posted.headers["location"])
    assert KEY.search(reloaded.text) is None
    assert "was shown once, when it was made" in reloaded.text
    assert len(_keys(dash)) == 1


def test_a_key_needs_a_known_scope(dash: Dashboard) -> None:
    _owner(dash)

    none = _create(dash, [])
    unknown = _create(dash, ["submit", "<script>alert(1)</script>"])

    assert none.status_code == unknown.status_code == 422
    assert "at least one scope" in none.text
    assert "<script>alert(1)</script>" not in unknown.text
    assert _keys(dash) == []


def test_an_owner_revokes_a_key_after_confirming(dash: Dashboard) -> None:
    _owner(dash)
    secret = dash.svc.api_key(dash.workspace.workspace_id)
    key_id = secret.key.key_id

    asked = _revoke(dash, key_id, confirm=False)

    assert asked.status_code == 200
    assert 'name="confirm" value="yes"' in asked.text
    assert _keys(dash)[0][2] is False
    done = _revoke(dash, key_id, confirm=True)
    assert done.status_code == 303
    assert done.headers["location"].startswith(SETTINGS + "?workspace=")
    assert dash.said(done) == f"Key {secret.key.prefix}… revoked: it is refused from now on."
    assert _keys(dash)[0][2] is True
    answer = dash.svc.server(dash.form.form_id, secret.secret, json={"message": "hi"})
    assert answer.status_code == 401


def test_a_member_sees_the_keys_but_cannot_create_or_revoke(dash: Dashboard) -> None:
    key = dash.svc.api_key(dash.workspace.workspace_id).key
    _member(dash)

    page = dash.client.get(SETTINGS)
    create = _create(dash, ["submit"])
    revoke = _revoke(dash, key.key_id, confirm=True)

    assert page.status_code == 200
    assert key.prefix in page.text
    assert "/dashboard/settings/keys" not in page.text  # no create or revoke form
    assert create.status_code == revoke.status_code == 403
    assert _keys(dash) == [(key.key_id, key.scopes, False)]


def test_refusals_without_session_or_csrf(dash: Dashboard) -> None:
    anonymous = dash.client.get(SETTINGS)
    assert anonymous.status_code == 303
    assert anonymous.headers["location"] == "/dashboard/sign-in?next=/dashboard/settings"
    assert dash.client.post(SETTINGS + "/keys", data={}).status_code == 303
    _owner(dash)

    no_csrf = dash.client.post(
        SETTINGS + "/keys", data={"workspace": dash.workspace.workspace_id, "scopes": "read"}
    )
    other_site = _create(dash, ["read"], origin="https://evil.example")

    assert no_csrf.status_code == other_site.status_code == 403
    assert _keys(dash) == []


def test_another_workspace_is_not_found(dash: Dashboard) -> None:
    other = dash.svc.workspace(name="Other")
    other_key = dash.svc.api_key(other.workspace_id).key
    _owner(dash)

    assert dash.client.get(SETTINGS, params={"workspace": other.workspace_id}).status_code == 404
    assert _create(dash, ["read"], workspace=other.workspace_id).status_code == 404
    assert _revoke(dash, other_key.key_id, confirm=True).status_code == 404
    assert _revoke(dash, "key_nope", confirm=True).status_code == 404
    assert dash.svc.run(dash.svc.services.keys.all, other.workspace_id)[0].revoked is False


def test_the_workspace_parameter_chooses_among_the_users(dash: Dashboard) -> None:
    second = dash.svc.workspace(name="Second <i>ws</i>")
    _owner(dash)
    dash.svc.run(dash.accounts.users.ensure, "owner@example.com", second.workspace_id, Role.MEMBER)
    dash.new_browser()
    dash.sign_in("owner@example.com", "correct horse battery")

    first = dash.client.get(SETTINGS)
    acme = dash.client.get(SETTINGS, params={"workspace": dash.workspace.workspace_id})
    chosen = dash.client.get(SETTINGS, params={"workspace": second.workspace_id})

    options = re.findall(r'<option value="([^"]+)"( selected)?>', first.text)
    assert len(options) == 2
    assert options[0][1] == " selected"  # the first, by default
    assert isolated("Acme &lt;b&gt;&amp;&lt;/b&gt;") + "</h1>" in acme.text
    assert 'action="/dashboard/settings/keys"' in acme.text  # owner there
    assert isolated("Second &lt;i&gt;ws&lt;/i&gt;") + "</h1>" in chosen.text
    assert 'action="/dashboard/settings/keys"' not in chosen.text  # member here
    assert _create(dash, ["read"], workspace=second.workspace_id).status_code == 403


def test_usage_shows_the_plan_the_month_and_each_form(dash: Dashboard) -> None:
    submitter = dash.svc.api_key(dash.workspace.workspace_id).secret
    for n in range(3):
        answer = dash.svc.server(dash.form.form_id, submitter, json={"message": f"{n}"})
        assert answer.status_code == 201, answer.text
    dash.svc.form(dash.workspace.workspace_id, name="javascript:alert(1)")
    usage = dash.svc.run(dash.svc.services.workspaces.usage, dash.workspace.workspace_id)
    _owner(dash)

    page = dash.client.get(SETTINGS).text

    assert f"{usage.used} of {usage.limit} submissions used" in page
    assert usage.used == 3
    assert f"ceiling, with overage, is {usage.ceiling}" in page
    assert f"Plan: {usage.workspace.plan.value}." in page
    width = round(3 * 100 / usage.ceiling) if usage.ceiling else 100
    assert f'<rect x="0" y="4" width="{width}" height="16"' in page
    assert "style=" not in page  # the CSP forbids inline style
    assert f'<code>{dash.form.form_id}</code></td><td data-label="Used">3</td>' in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page  # the form's name, escaped
    assert "<script>" not in page
    assert "javascript:alert(1)" in page  # shown, as text
    assert 'href="javascript' not in page


def test_the_keys_list_pages_through_a_workspaces_keys(
    dash: Dashboard, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(settings, "KEYS_PER_PAGE", 2)
    _owner(dash)
    workspace = dash.workspace.workspace_id
    made = {
        dash.svc.run(dash.svc.services.keys.create, workspace, frozenset({Scope.READ})).key.prefix
        for _ in range(3)
    }

    first = dash.client.get(SETTINGS)
    more = re.findall(r'href="(/dashboard/settings\?[^"]+)">More keys', first.text)
    assert len(more) == 1
    second = dash.client.get(more[0].replace("&amp;", "&"))
    shown = [set(PREFIX.findall(page.text)) for page in (first, second)]

    assert second.status_code == 200
    assert shown[0].isdisjoint(shown[1])
    assert shown[0] | shown[1] == made
    assert "More keys" not in second.text
    assert "First keys" in second.text
    refused = dash.client.get(f"{SETTINGS}?workspace={workspace}&cursor=nonsense")
    assert refused.status_code == 422
    assert set(PREFIX.findall(refused.text)) == shown[0]
