"""What a form mails and keeps over the management API: its switches and templates in
the form's object, set by POST and PATCH /v1/forms under `intake form`'s rules (a
template that does not compile or reaches outside the sandbox refused as 422 naming it),
and POST /v1/forms/{form_id}/templates/preview."""

from __future__ import annotations

from typing import Any

import pytest

from intake.domain.form_messages import TEMPLATE_NAMES
from tests.http.conftest import (
    Service,
    assert_error,
)
from tests.http.test_management_forms import Owner


@pytest.fixture
def owner(svc: Service) -> Owner:
    return Owner(svc)


def _fields(response: Any) -> dict[str, str]:
    fields: dict[str, str] = assert_error(response, "validation_failed")["error"]["fields"]
    return fields


def test_a_new_form_mails_its_recipients_keeps_its_data_and_answers_no_one(
    owner: Owner,
) -> None:
    form = owner.create()

    assert form["mail_notifications"] is True
    assert form["forward_only"] is False
    assert form["autoresponse"] is False
    assert form["autoresponse_hourly_limit"] is None
    assert form["templates"] == dict.fromkeys(TEMPLATE_NAMES)


def test_the_switches_and_templates_are_set_kept_and_reset(owner: Owner) -> None:
    form = owner.create(autoresponse=True, templates={"autoresponse_text": "Hi {{ fields.name }}"})
    form_id = form["form_id"]
    assert form["autoresponse"] is True

    response = owner.send(
        "PATCH",
        f"/v1/forms/{form_id}",
        {
            "mail_notifications": False,
            "forward_only": True,
            "autoresponse_hourly_limit": 10,
            "templates": {"notification_subject": "New: {{ subject }}"},
        },
    )

    assert response.status_code == 200, response.text
    changed = response.json()
    assert changed == owner.stored(form_id)
    assert (changed["mail_notifications"], changed["forward_only"]) == (False, True)
    assert changed["autoresponse_hourly_limit"] == 10
    assert changed["templates"]["autoresponse_text"] == "Hi {{ fields.name }}"
    assert changed["templates"]["notification_subject"] == "New: {{ subject }}"

    reset = owner.send(
        "PATCH",
        f"/v1/forms/{form_id}",
        {"autoresponse_hourly_limit": None, "templates": {"autoresponse_text": None}},
    ).json()
    assert reset["autoresponse_hourly_limit"] is None
    assert reset["templates"]["autoresponse_text"] is None
    assert reset["templates"]["notification_subject"] == "New: {{ subject }}"


@pytest.mark.parametrize(
    ("templates", "field"),
    [
        ({"notification_html": "{{ ''.__class__ }}"}, "templates.notification_html"),
        ({"autoresponse_text": "{% if %}"}, "templates.autoresponse_text"),
        ({"autoresponse_subject": "{% for i in range(10**9) %}{% endfor %}"},
         "templates.autoresponse_subject"),
        ({"notification_text": 3}, "templates.notification_text"),
        ({"footer": "x"}, "templates"),
    ],
)  # fmt: skip
def test_a_bad_template_is_refused_naming_it_and_nothing_is_saved(
    owner: Owner, templates: dict[str, object], field: str
) -> None:
    form_id = owner.create()["form_id"]
    before = owner.stored(form_id)

    response = owner.send("PATCH", f"/v1/forms/{form_id}", {"templates": templates})

    assert field in _fields(response)
    assert owner.stored(form_id) == before
    assert field in _fields(owner.send("POST", "/v1/forms", {"name": "X", "templates": templates}))


def test_every_bad_message_field_is_named_at_once(owner: Owner) -> None:
    form_id = owner.create()["form_id"]

    response = owner.send(
        "PATCH",
        f"/v1/forms/{form_id}",
        {
            "autoresponse": "yes",
            "autoresponse_hourly_limit": 0,
            "templates": {"notification_subject": "{{ x.__init__ }}"},
        },
    )

    assert set(_fields(response)) == {
        "autoresponse",
        "autoresponse_hourly_limit",
        "templates.notification_subject",
    }


def test_the_preview_shows_the_form_templates_with_a_sample_submission(owner: Owner) -> None:
    form_id = owner.create(templates={"notification_html": "<p>{{ fields.message }}</p>"})[
        "form_id"
    ]

    response = owner.send("POST", f"/v1/forms/{form_id}/templates/preview", {})

    assert response.status_code == 200, response.text
    preview = response.json()
    assert preview["kind"] == "notification"
    assert preview["html"] == "<p>Hello &lt;b&gt;there&lt;/b&gt;</p>\n"
    assert "intake" not in preview["subject"].lower() + preview["text"].lower()

    tried = owner.send(
        "POST",
        f"/v1/forms/{form_id}/templates/preview",
        {"kind": "autoresponse", "templates": {"autoresponse_subject": "Thanks {{ fields.name }}"}},
    ).json()
    # A confirmation's subject never carries the visitor's text.
    assert tried["subject"] == "Thanks"
    # Tried, not saved.
    assert (
        owner.svc.run(owner.svc.services.forms.get, form_id).messages.templates.autoresponse_subject
        is None
    )


def test_the_preview_refuses_a_bad_template_and_another_workspaces_form(owner: Owner) -> None:
    form_id = owner.create()["form_id"]
    path = f"/v1/forms/{form_id}/templates/preview"

    bad = owner.send("POST", path, {"templates": {"notification_subject": "{{ ''.__class__ }}"}})
    assert "templates.notification_subject" in _fields(bad)
    assert "kind" in _fields(owner.send("POST", path, {"kind": "sms"}))
    other = Owner(owner.svc, "Other")
    missing = other.send("POST", path, {})
    assert missing.status_code == 404
    assert missing.json()["error"]["code"] == "not_found"
    reader = owner.svc.client.post(path, json={}, headers=owner.read)
    assert reader.status_code == 403
