"""Forms made and unmade in the dashboard: a new form from the Forms page leads to its
settings with its HTML; a duplicate has a key of its own; a deletion needs the form's
name typed, then the form is gone and its submissions erased; members are refused; and
an owner's first steps tick themselves off as the workspace is set up."""

from __future__ import annotations

import html
import re

import httpx2
import pytest

from intake.domain.users import Role
from tests.http.conftest import (
    ServiceFactory,
)
from tests.http.dashboard_support import Dashboard


@pytest.fixture
def dash(make_service: ServiceFactory) -> Dashboard:
    return Dashboard(make_service())


def settings_of(response: httpx2.Response) -> str:
    """The settings path a 303 leads to."""
    assert response.status_code == 303, response.text
    location = response.headers["location"]
    assert re.fullmatch(r"/dashboard/forms/frm_\w+/settings\?\w+=1", location)
    return location


def steps(page: str) -> dict[str, bool]:
    """The first steps the page shows: each one's text, and whether it is done."""
    found = re.findall(r'<li class="(done|todo)">.*?</span> (?:<a [^>]*>)?([^<]+)', page)
    return {html.unescape(text).strip(): state == "done" for state, text in found}


def test_a_new_form_leads_to_its_settings_and_its_html(dash: Dashboard) -> None:
    dash.owner_signs_in()

    made = dash.post("/dashboard/forms/new", workspace=dash.workspace.workspace_id, name="Careers")

    location = settings_of(made)
    assert location.endswith("?created=1")
    page = dash.client.get(location)
    assert page.status_code == 200
    assert "Form created." in page.text
    assert "Careers" in page.text
    form_id = location.split("/")[3]
    form = dash.svc.run(dash.svc.services.forms.get, form_id)
    assert form.name == "Careers"
    assert f"/f/{form.public_form_key}" in page.text, "the snippet carries its key"


def test_a_new_form_without_a_name_is_refused_by_its_control(dash: Dashboard) -> None:
    dash.owner_signs_in()
    before = dash.svc.run(dash.svc.services.forms.all, dash.workspace.workspace_id)

    refused = dash.post("/dashboard/forms/new", workspace=dash.workspace.workspace_id, name=" ")

    assert refused.status_code == 422
    assert "a form&#39;s name cannot be empty" in refused.text
    assert 'aria-invalid="true"' in refused.text
    assert dash.svc.run(dash.svc.services.forms.all, dash.workspace.workspace_id) == before


def test_members_and_strangers_cannot_make_copy_or_delete_forms(dash: Dashboard) -> None:
    dash.set_password(dash.link("member@example.com", Role.MEMBER))
    path = f"/dashboard/forms/{dash.form.form_id}/settings"
    before = dash.svc.run(dash.svc.services.forms.all, dash.workspace.workspace_id)

    workspace = dash.workspace.workspace_id
    assert dash.post("/dashboard/forms/new", workspace=workspace, name="X").status_code == 403
    assert dash.post("/dashboard/forms/new", workspace="ws_other", name="X").status_code == 404
    assert dash.post(f"{path}/duplicate").status_code == 403
    assert dash.client.get(f"{path}/delete").status_code == 403
    assert dash.post(f"{path}/delete", confirm=dash.form.name).status_code == 403
    assert dash.svc.run(dash.svc.services.forms.all, dash.workspace.workspace_id) == before
    assert "New form" not in dash.client.get("/dashboard").text


def test_a_post_without_its_csrf_token_changes_nothing(dash: Dashboard) -> None:
    dash.owner_signs_in()
    path = f"/dashboard/forms/{dash.form.form_id}/settings"

    deleted = dash.client.post(f"{path}/delete", data={"confirm": dash.form.name})
    made = dash.client.post(
        "/dashboard/forms/new", data={"workspace": dash.workspace.workspace_id, "name": "X"}
    )

    assert (deleted.status_code, made.status_code) == (403, 403)
    assert len(dash.svc.run(dash.svc.services.forms.all, dash.workspace.workspace_id)) == 1


def test_a_duplicate_has_the_settings_and_a_key_of_its_own(dash: Dashboard) -> None:
    dash.owner_signs_in()
    path = f"/dashboard/forms/{dash.form.form_id}/settings"

    location = settings_of(dash.post(f"{path}/duplicate"))

    assert location.endswith("?duplicated=1")
    page = dash.client.get(location)
    assert "Form duplicated" in page.text
    copy = dash.svc.run(dash.svc.services.forms.get, location.split("/")[3])
    assert copy.name == f"{dash.form.name} (copy)"
    assert copy.public_form_key != dash.form.public_form_key
    assert copy.allowed_origins == dash.form.allowed_origins


def test_a_deletion_needs_the_forms_name_typed(dash: Dashboard) -> None:
    dash.owner_signs_in()
    svc = dash.svc
    answer = svc.public(dash.form.public_form_key, json={"message": "Hello"})
    assert answer.status_code == 201, answer.text
    submission_id = answer.json()["submission_id"]
    path = f"/dashboard/forms/{dash.form.form_id}/settings"
    warning = dash.client.get(f"{path}/delete")
    assert warning.status_code == 200
    assert "This cannot be undone." in warning.text

    wrong = dash.post(f"{path}/delete", confirm="Contact")

    assert wrong.status_code == 422
    assert "nothing was deleted" in wrong.text
    assert svc.run(svc.services.forms.get, dash.form.form_id) == dash.form

    right = dash.post(f"{path}/delete", confirm=dash.form.name)

    assert right.status_code == 303
    assert right.headers["location"] == "/dashboard?deleted=1"
    assert "Form deleted" in dash.client.get(right.headers["location"]).text
    assert dash.client.get(path).status_code == 404
    assert svc.run(svc.store.submissions.get, submission_id) is None, "erased"
    gone = svc.public(dash.form.public_form_key, json={"message": "late"})
    assert gone.status_code == 404


def test_the_first_steps_tick_themselves_off(dash: Dashboard) -> None:
    dash.owner_signs_in()
    svc = dash.svc

    first = steps(dash.client.get("/dashboard").text)

    assert first == {
        "Create a form": True,
        "Put its HTML on your site and send a test submission": False,
        "Add a notification: a mail recipient, a webhook or a chat": False,
    }
    assert svc.public(dash.form.public_form_key, json={"message": "Hi"}).status_code == 201
    second = steps(dash.client.get("/dashboard").text)
    assert second["Put its HTML on your site and send a test submission"] is True
    assert second["Add a notification: a mail recipient, a webhook or a chat"] is False

    svc.run(svc.services.recipients.add, dash.form.form_id, "team@example.com")

    assert "First steps" not in dash.client.get("/dashboard").text, "all done: gone"


def test_a_workspace_without_forms_shows_the_first_step_to_do(dash: Dashboard) -> None:
    dash.owner_signs_in()
    path = f"/dashboard/forms/{dash.form.form_id}/settings"
    dash.post(f"{path}/delete", confirm=dash.form.name)

    page = dash.client.get("/dashboard").text

    assert steps(page)["Create a form"] is False
    assert "No forms yet." in page


@pytest.mark.parametrize(
    "name", ["Contact  form", "Contact\u200b form", "Contact \u202eform", " Contact\tform\n"]
)
def test_a_deletion_asks_for_the_name_as_the_page_shows_it(dash: Dashboard, name: str) -> None:
    """A name with a run of spaces or an invisible character (given through the API,
    say) is shown with the run collapsed and the character dropped: what the owner is
    asked to type is what they see, and typing it deletes the form."""
    form = dash.svc.form(dash.workspace.workspace_id, name=name)
    dash.owner_signs_in()
    path = f"/dashboard/forms/{form.form_id}/settings"

    page = dash.client.get(f"{path}/delete").text
    deleted = dash.post(f"{path}/delete", confirm="Contact form")

    assert '<strong><bdi dir="auto">Contact form</bdi></strong>' in page
    assert deleted.status_code == 303, deleted.text
    assert dash.client.get(path).status_code == 404
