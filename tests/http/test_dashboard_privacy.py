"""The dashboard's privacy: an owner erases a person's submissions from the settings page
(what would go first, then, confirmed, the receipt), with the CSRF token every post
carries; a member cannot. A form's retention on its settings page, and the inbox saying
how long data is kept."""

from __future__ import annotations

import httpx2
import pytest

from intake.domain.users import Role
from tests.http.conftest import ServiceFactory
from tests.http.dashboard_support import Dashboard

SETTINGS = "/dashboard/settings"
ERASURE = SETTINGS + "/erasure"
ADA = "ada@example.com"


@pytest.fixture
def dash(make_service: ServiceFactory) -> Dashboard:
    return Dashboard(make_service())


def _send(dash: Dashboard, **data: str) -> str:
    answer = dash.svc.public(dash.form.public_form_key, json=data)
    assert answer.status_code == 201, answer.text
    submission_id: str = answer.json()["submission_id"]
    return submission_id


def _stored(dash: Dashboard) -> set[str]:
    return {s.submission_id for s in dash.svc.submissions(dash.form.form_id)}


def _erase(
    dash: Dashboard, email: str, *, confirm: bool, csrf: str | None = None
) -> httpx2.Response:
    data = {
        "csrf": csrf if csrf is not None else dash.csrf(SETTINGS),
        "workspace": dash.workspace.workspace_id,
        "email": email,
    }
    if confirm:
        data["confirm"] = "yes"
    return dash.client.post(ERASURE, data=data)


def test_an_owner_sees_what_would_go_then_erases_it(dash: Dashboard) -> None:
    dash.owner_signs_in()
    ada = {_send(dash, email=ADA, message="private words"), _send(dash, who=ADA.upper())}
    bob = _send(dash, email="bob@example.com")
    page = dash.client.get(SETTINGS)
    assert 'action="/dashboard/settings/erasure"' in page.text

    shown = _erase(dash, ADA, confirm=False)

    assert shown.status_code == 200, shown.text
    assert all(submission_id in shown.text for submission_id in ada)
    assert bob not in shown.text
    assert 'name="confirm" value="yes"' in shown.text
    assert _stored(dash) == ada | {bob}

    posted = _erase(dash, ADA, confirm=True)

    # Post, redirect, get: the receipt once; a reload erases nothing and shows none.
    assert posted.status_code == 303, posted.text
    assert ADA not in posted.headers["location"]
    done = dash.client.get(posted.headers["location"])
    assert done.status_code == 200, done.text
    assert "Erased 2 submissions" in done.text
    assert "private words" not in done.text
    assert _stored(dash) == {bob}
    later = _send(dash, email=ADA)
    reloaded = dash.client.get(posted.headers["location"])
    assert reloaded.status_code == 303
    assert reloaded.headers["location"].startswith(SETTINGS)
    assert _stored(dash) == {bob, later}


def test_a_post_without_the_csrf_token_erases_nothing(dash: Dashboard) -> None:
    dash.owner_signs_in()
    ada = _send(dash, email=ADA)

    refused = _erase(dash, ADA, confirm=True, csrf="forged")

    assert refused.status_code == 403
    assert _stored(dash) == {ada}


def test_a_member_cannot_erase(dash: Dashboard) -> None:
    dash.set_password(dash.link("member@example.com", Role.MEMBER))
    ada = _send(dash, email=ADA)
    page = dash.client.get(SETTINGS)
    assert 'action="/dashboard/settings/erasure"' not in page.text

    refused = _erase(dash, ADA, confirm=True)

    assert refused.status_code == 403
    assert _stored(dash) == {ada}


def test_a_signed_out_visitor_cannot_erase(dash: Dashboard) -> None:
    ada = _send(dash, email=ADA)

    answer = dash.client.post(
        ERASURE, data={"workspace": dash.workspace.workspace_id, "email": ADA, "confirm": "yes"}
    )

    assert answer.status_code in (303, 403)
    assert _stored(dash) == {ada}


def test_an_address_that_is_not_one_is_refused_on_the_page(dash: Dashboard) -> None:
    dash.owner_signs_in()
    ada = _send(dash, email=ADA)

    refused = _erase(dash, "<b>nobody</b>", confirm=True)

    assert refused.status_code == 422
    assert "valid email address" in refused.text
    assert "<b>nobody</b>" not in refused.text
    assert _stored(dash) == {ada}


def test_another_workspace_is_not_found(dash: Dashboard) -> None:
    dash.owner_signs_in()
    other = dash.svc.workspace(name="Other")

    answer = dash.client.post(
        ERASURE,
        data={"csrf": dash.csrf(SETTINGS), "workspace": other.workspace_id, "email": ADA},
    )

    assert answer.status_code == 404


# -- a form's retention ---------------------------------------------------------------------


def _settings_path(dash: Dashboard) -> str:
    return f"/dashboard/forms/{dash.form.form_id}/settings"


def _save(dash: Dashboard, retention: str) -> httpx2.Response:
    path = _settings_path(dash)
    page = dash.client.get(path)
    assert page.status_code == 200
    assert 'id="retention_days"' in page.text
    data = {
        "csrf": dash.csrf(path),
        "name": "Contact",
        "allowed_origins": "",
        "challenge_provider": "",
        "challenge_secret": "",
        "redirect_url": "",
        "spam_threshold": "5",
        "rules": "",
        "retention_days": retention,
    }
    return dash.client.post(path, data=data)


def test_an_owner_sets_and_clears_a_forms_retention_and_the_inbox_says_it(
    dash: Dashboard,
) -> None:
    dash.owner_signs_in()
    inbox = f"/dashboard/forms/{dash.form.form_id}"
    assert "Submissions are kept until erased." in dash.client.get(inbox).text

    saved = _save(dash, "30")

    assert saved.status_code == 303, saved.text
    assert dash.svc.run(dash.svc.services.forms.get, dash.form.form_id).retention_days == 30
    assert "Submissions are kept 30 days, then erased" in dash.client.get(inbox).text
    assert 'value="30"' in dash.client.get(_settings_path(dash)).text

    assert _save(dash, "").status_code == 303
    assert dash.svc.run(dash.svc.services.forms.get, dash.form.form_id).retention_days is None


@pytest.mark.parametrize("retention", ["0", "ten", "99999"])
def test_a_bad_retention_is_refused_beside_its_control(dash: Dashboard, retention: str) -> None:
    dash.owner_signs_in()

    refused = _save(dash, retention)

    assert refused.status_code == 422
    assert 'id="retention_days-error"' in refused.text or "retention" in refused.text.lower()
    assert dash.svc.run(dash.svc.services.forms.get, dash.form.form_id).retention_days is None
