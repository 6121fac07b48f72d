"""The submission page's tools, on every store: its JSON (the API's, from the same
service), long values folded behind "Show all", sizes in KB and MB, a delivery timeline
naming each destination with a retry for owners, and a message after every action."""

from __future__ import annotations

from datetime import timedelta

import httpx2
import pytest

from intake.domain.deliveries import DeliveryState
from intake.domain.model import Scope
from intake.domain.users import Role
from tests.http.conftest import ServiceFactory
from tests.http.dashboard_support import Dashboard, isolated
from tests.http.test_uploads import Uploads, pdf

LEASE = timedelta(minutes=2)
HOOK = "https://hooks.example.com/intake/T0KEN-in-the-path?sig=abc"
SHOWN_HOOK = "https://hooks.example.com/…"


@pytest.fixture
def dash(make_service: ServiceFactory) -> Dashboard:
    return Dashboard(make_service())


def _submit(dash: Dashboard, fields: list[tuple[str, str]], size: int = 1500) -> str:
    up = Uploads(dash.svc)
    form = up.take_files(dash.form)
    answer = up.post(fields, [("cv", "cv.pdf", pdf(size), "application/pdf")], form=form)
    assert answer.status_code in (200, 201, 303), answer.text
    return dash.svc.submissions(form.form_id)[-1].submission_id


def _page(submission_id: str) -> str:
    return f"/dashboard/submissions/{submission_id}"


def _dead_delivery(dash: Dashboard) -> tuple[str, str]:
    """A submission whose one webhook delivery was given up: its id and the delivery's."""
    svc = dash.svc
    svc.run(svc.services.webhooks.add, dash.form.form_id, HOOK)
    submission_id = _submit(dash, [("message", "hello")])
    svc.run(svc.store.deliveries.fan_out, svc.clock.now(), 100)
    [delivery] = svc.run(svc.store.deliveries.list_deliveries)
    now = svc.clock.now()
    svc.run(svc.store.deliveries.claim_due, now, LEASE, 100)
    svc.run(svc.store.deliveries.record_failure, delivery.delivery_id, now, "HTTP 500", None, 500)
    return submission_id, delivery.delivery_id


def _state(dash: Dashboard, delivery_id: str) -> DeliveryState:
    record = dash.svc.run(dash.svc.store.deliveries.get_delivery, delivery_id)
    assert record is not None
    return record.delivery.state


def _retry(dash: Dashboard, submission_id: str, delivery_id: str, **data: str) -> httpx2.Response:
    data.setdefault("csrf", dash.csrf(_page(submission_id)))
    return dash.client.post(_page(submission_id) + "/retry", data={"delivery": delivery_id, **data})


def test_the_json_is_the_apis_from_the_same_view(dash: Dashboard) -> None:
    submission_id, _ = _dead_delivery(dash)
    key = dash.svc.run(
        dash.svc.services.keys.create, dash.workspace.workspace_id, scopes=frozenset({Scope.READ})
    )
    dash.owner_signs_in()

    page = dash.client.get(_page(submission_id))
    mine = dash.client.get(_page(submission_id) + "/json")
    api = dash.client.get(
        f"/v1/submissions/{submission_id}", headers={"authorization": f"Bearer {key.secret}"}
    )

    assert mine.status_code == api.status_code == 200
    assert mine.headers["content-type"] == "application/json"
    assert mine.json() == api.json()
    assert mine.headers["cache-control"] == "no-store"
    assert f'href="{_page(submission_id)}/json"' in page.text
    # The copy button waits for the script, which unhides it.
    assert f'data-copy-from="{_page(submission_id)}/json" hidden>Copy as JSON' in page.text


def test_the_json_is_for_signed_in_users_of_its_workspace(dash: Dashboard) -> None:
    submission_id = _submit(dash, [("message", "hello")])

    anonymous = dash.client.get(_page(submission_id) + "/json")
    other = dash.svc.workspace(name="Other")
    created = dash.svc.run(
        dash.accounts.users.create, "stranger@example.com", other.workspace_id, Role.OWNER
    )
    assert created.link is not None
    dash.set_password("/" + created.link.split("/", 3)[3])
    stranger = dash.client.get(_page(submission_id) + "/json")

    assert anonymous.status_code == 303
    assert stranger.status_code == 404
    assert "hello" not in stranger.text


def test_long_values_fold_behind_show_all_and_sizes_read_in_kb(dash: Dashboard) -> None:
    long_text = "word " * 400  # 2,000 characters
    submission_id = _submit(dash, [("short", "brief"), ("long", long_text)], size=1536)
    dash.owner_signs_in()

    text = dash.client.get(_page(submission_id)).text

    assert f'<span class="value">{isolated("brief")}</span>' in text  # short: whole
    assert "<summary>Show all 2,000 characters</summary>" in text
    head = long_text[:300]
    assert f'<span class="value fold-head">{isolated(head)}…</span>' in text
    assert f'<span class="value">{isolated(long_text)}</span></details>' in text
    assert '<data value="1536">1.5 KB</data>' in text


def test_the_timeline_names_each_destination_and_an_owner_retries_one(dash: Dashboard) -> None:
    submission_id, delivery_id = _dead_delivery(dash)
    dash.owner_signs_in()

    before = dash.client.get(_page(submission_id)).text
    retried = _retry(dash, submission_id, delivery_id)
    after = dash.client.get(retried.headers["location"])
    again = dash.client.get(retried.headers["location"])

    assert f'Webhook to <span class="secret">{isolated(SHOWN_HOOK)}</span>: dead' in before
    assert "T0KEN" not in before
    assert "Retry now</button>" in before
    assert retried.status_code == 303
    assert retried.headers["location"] == _page(submission_id) + "?told=1#deliveries"
    assert _state(dash, delivery_id) is DeliveryState.PENDING
    said = f"The webhook delivery to {SHOWN_HOOK} is due again"
    assert said in after.text
    assert "T0KEN" not in after.text
    assert said not in again.text  # said once
    assert ": pending" in after.text


def test_a_delivered_delivery_is_not_retried(dash: Dashboard) -> None:
    submission_id, delivery_id = _dead_delivery(dash)
    svc = dash.svc
    svc.run(svc.store.deliveries.retry_delivery, delivery_id, svc.clock.now())
    now = svc.clock.now()
    svc.run(svc.store.deliveries.claim_due, now, LEASE, 100)
    svc.run(svc.store.deliveries.record_success, delivery_id, now, 200)
    dash.owner_signs_in()

    page = dash.client.get(_page(submission_id)).text
    retried = _retry(dash, submission_id, delivery_id)

    assert "Retry now</button>" not in page
    assert retried.status_code == 303
    assert (
        "was delivered already: nothing to retry"
        in dash.client.get(retried.headers["location"]).text
    )
    assert _state(dash, delivery_id) is DeliveryState.DELIVERED


def test_retry_is_an_owners_with_the_token_and_this_submissions_delivery(
    dash: Dashboard,
) -> None:
    submission_id, delivery_id = _dead_delivery(dash)
    another = _submit(dash, [("message", "another")])
    dash.set_password(dash.link("member@example.com", Role.MEMBER))

    member_page = dash.client.get(_page(submission_id)).text
    member = _retry(dash, submission_id, delivery_id)
    dash.new_browser()
    dash.owner_signs_in()
    no_token = _retry(dash, submission_id, delivery_id, csrf="x" * 40)
    elsewhere = _retry(dash, another, delivery_id)
    unknown = _retry(dash, submission_id, "dlv_unknown")

    assert "Retry now" not in member_page
    assert member.status_code == no_token.status_code == 403
    assert elsewhere.status_code == unknown.status_code == 404
    assert _state(dash, delivery_id) is DeliveryState.DEAD


@pytest.mark.parametrize(
    ("action", "said"),
    [
        ("release", "Released: the submission is accepted."),
        ("spam", "Marked as spam."),
        ("delete", "Submission deleted, with its files."),
    ],
)
def test_every_triage_says_what_it_did_once(dash: Dashboard, action: str, said: str) -> None:
    submission_id = _submit(dash, [("message", "hello")])
    dash.owner_signs_in()

    token = dash.csrf(_page(submission_id))
    done = dash.client.post(f"{_page(submission_id)}/{action}", data={"csrf": token})
    shown = dash.client.get(done.headers["location"])
    reloaded = dash.client.get(done.headers["location"])

    assert done.status_code == 303
    assert f'<p class="notice" role="status">{said}</p>' in shown.text
    assert said not in reloaded.text


def test_a_delivery_not_tried_yet_has_no_retry(dash: Dashboard) -> None:
    svc = dash.svc
    svc.run(svc.services.webhooks.add, dash.form.form_id, HOOK)
    submission_id = _submit(dash, [("message", "hello")])
    svc.run(svc.store.deliveries.fan_out, svc.clock.now(), 100)
    dash.owner_signs_in()

    page = dash.client.get(_page(submission_id)).text

    assert f'Webhook to <span class="secret">{isolated(SHOWN_HOOK)}</span>: pending' in page
    assert "Retry now" not in page  # due already: the relay sends it on its next round
