"""A form's webhooks in the dashboard: owners add one (the secret on the answer page only),
remove one after confirming, send a test event that the real relay signs and posts to a
local receiver, and read an endpoint's delivery log a page at a time, retrying a
delivery; members are refused, other workspaces' ids are not found, CSRF is required."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from standardwebhooks import Webhook

from intake.adapters.memory.senders import FakeMailer
from intake.adapters.webhook_http import HttpWebhookSender
from intake.config import Settings
from intake.domain.deliveries import DeliveryState
from intake.domain.model import Scope
from intake.domain.users import Role
from intake.entrypoints.http.dashboard import form_webhooks
from intake.service.admin import OwnerServices
from intake.service.relay import Relay
from tests.http.conftest import ServiceFactory
from tests.http.dashboard_support import Dashboard, isolated
from tests.support.receiver import Receiver

SECRET = re.compile(r'<code class="secret">(whsec_[^<]+)</code>')
HOSTILE_URL = 'http://127.0.0.1:9/h?x=<script>alert(3)</script>&y="q"'
LEASE = timedelta(minutes=2)


@pytest.fixture
def dash(make_service: ServiceFactory) -> Dashboard:
    # The receiver is plain http on 127.0.0.1, as INTAKE_WEBHOOK_ALLOW_PRIVATE allows.
    return Dashboard(make_service(Settings(webhook_allow_private=True)))


def _hooks(dash: Dashboard) -> str:
    return f"/dashboard/forms/{dash.form.form_id}/settings/webhooks"


def _services(dash: Dashboard) -> OwnerServices:
    """The serving process's own, which takes the receiver's private address."""
    services: OwnerServices = dash.app.state.runtime.services
    return services


def _add(dash: Dashboard, url: str) -> str:
    created = dash.svc.run(_services(dash).webhooks.add, dash.form.form_id, url)
    return created.endpoint.endpoint_id


def _endpoints(dash: Dashboard) -> list[tuple[str, bool]]:
    found = dash.svc.run(dash.svc.services.webhooks.all, dash.form.form_id)
    return [(e.url, e.include_flagged) for e in found]


def _relay(dash: Dashboard) -> None:
    svc = dash.svc

    async def run() -> None:
        async with httpx.AsyncClient() as client:
            sender = HttpWebhookSender(client, allow_private=True)
            await Relay(svc.store, sender, FakeMailer(), svc.clock, jitter=lambda: 0.0).run_once()

    svc.run(run)


def test_an_owner_adds_an_endpoint_and_sees_its_secret_once(dash: Dashboard) -> None:
    dash.owner_signs_in()

    posted = dash.post(_hooks(dash), url=HOSTILE_URL, include_flagged="yes")

    # Post, redirect, get: the page it leads to shows the secret, once.
    assert posted.status_code == 303
    [endpoint] = dash.svc.run(dash.svc.services.webhooks.all, dash.form.form_id)
    assert posted.headers["location"] == f"{_hooks(dash)}?created={endpoint.endpoint_id}"
    added = dash.client.get(posted.headers["location"])
    assert added.status_code == 200
    assert added.headers["cache-control"] == "no-store"
    found = SECRET.search(added.text)
    assert found is not None
    secret = found.group(1)
    assert secret == endpoint.secret
    assert _endpoints(dash) == [(HOSTILE_URL, True)]
    listed = dash.client.get(_hooks(dash))
    assert secret not in listed.text  # never again
    assert "x=&lt;script&gt;alert(3)&lt;/script&gt;&amp;y=&#34;q&#34;" in listed.text
    assert "<script>alert(3)" not in listed.text
    assert "submission.flagged" in listed.text
    assert "enabled" in listed.text
    assert secret not in posted.headers["location"]


def test_reloading_the_page_an_add_leads_to_adds_nothing_and_shows_no_secret(
    dash: Dashboard,
) -> None:
    dash.owner_signs_in()
    posted = dash.post(_hooks(dash), url="http://127.0.0.1:9/h")
    first = dash.client.get(posted.headers["location"])

    reloaded = dash.client.get(posted.headers["location"])

    assert SECRET.search(first.text) is not None
    assert reloaded.status_code == 200
    assert SECRET.search(reloaded.text) is None
    assert "was shown once, when it was added" in reloaded.text
    assert len(_endpoints(dash)) == 1


def test_a_bad_url_is_said_and_kept_and_nothing_is_added(dash: Dashboard) -> None:
    dash.owner_signs_in()

    bad = dash.post(_hooks(dash), url="ftp://<b>x</b>")
    long = dash.post(_hooks(dash), url="https://hooks.example.com/" + "a" * 2048)

    assert bad.status_code == long.status_code == 422
    assert "URL: not an absolute http(s) URL" in bad.text
    assert 'value="ftp://&lt;b&gt;x&lt;/b&gt;"' in bad.text
    assert "<b>x</b>" not in bad.text
    assert "at most 2048 characters" in long.text
    assert _endpoints(dash) == []


def test_a_second_endpoint_at_the_same_url_is_said_and_not_added(dash: Dashboard) -> None:
    dash.owner_signs_in()
    _add(dash, "http://127.0.0.1/h?token=s3cret")

    again = dash.post(_hooks(dash), url="HTTP://127.0.0.1:80/h?token=s3cret")

    assert again.status_code == 422
    assert "URL: this form has an endpoint at this URL already." in again.text
    assert _endpoints(dash) == [("http://127.0.0.1/h?token=s3cret", False)]


def test_removing_asks_first(dash: Dashboard) -> None:
    dash.owner_signs_in()
    endpoint_id = _add(dash, "http://127.0.0.1:9/h")

    asked = dash.post(_hooks(dash) + "/remove", endpoint=endpoint_id)

    assert asked.status_code == 200
    assert 'name="confirm" value="yes"' in asked.text
    assert len(_endpoints(dash)) == 1
    done = dash.post(_hooks(dash) + "/remove", endpoint=endpoint_id, confirm="yes")
    assert done.status_code == 303
    assert done.headers["location"] == _hooks(dash) + "?told=1"
    said = "Endpoint http://127.0.0.1:9/… removed: nothing more is sent to it."
    assert said in dash.client.get(done.headers["location"]).text
    assert _endpoints(dash) == []


def test_a_test_event_reaches_the_receiver_signed_and_shows_in_the_log(
    dash: Dashboard, receiver: Receiver
) -> None:
    dash.owner_signs_in()
    added = dash.client.get(dash.post(_hooks(dash), url=receiver.url()).headers["location"])
    secret = SECRET.search(added.text)
    assert secret is not None
    [endpoint] = dash.svc.run(dash.svc.services.webhooks.all, dash.form.form_id)
    page = f"{_hooks(dash)}/{endpoint.endpoint_id}"

    sent = dash.post(page + "/test")

    assert sent.status_code == 303
    assert sent.headers["location"] == page + "?told=1"
    assert "Test event queued" in dash.client.get(sent.headers["location"]).text
    assert "webhook.test · pending" in dash.client.get(page).text
    _relay(dash)
    [request] = receiver.requests
    moment = datetime.fromtimestamp(int(request.headers["webhook-timestamp"]), tz=UTC)
    signed = Webhook(secret.group(1)).sign(
        request.headers["webhook-id"], moment, request.body.decode()
    )
    assert request.headers["webhook-signature"] == signed
    log = dash.client.get(page).text
    assert "webhook.test · delivered" in log
    assert "<td>200</td>" in log
    assert "/dashboard/submissions/" not in log  # a test has no submission


def test_a_failed_delivery_is_retried_and_a_submission_is_linked(
    dash: Dashboard, receiver: Receiver
) -> None:
    endpoint_id = _add(dash, receiver.url())
    submitter = dash.svc.run(
        dash.svc.services.keys.create, dash.workspace.workspace_id, scopes=frozenset({Scope.SUBMIT})
    )
    answer = dash.svc.server(dash.form.form_id, submitter.secret, json={"message": "hi"})
    submission_id = answer.json()["submission_id"]
    receiver.statuses = [500]
    _relay(dash)
    dash.owner_signs_in()
    page = f"{_hooks(dash)}/{endpoint_id}"
    failed = dash.client.get(page).text
    assert "submission.created · pending" in failed
    assert f'href="/dashboard/submissions/{submission_id}"' in failed
    assert f"<td>500 · {isolated('HTTP 500')}</td>" in failed
    [delivery] = dash.svc.run(dash.svc.store.deliveries.endpoint_deliveries, endpoint_id)

    retried = dash.post(page + "/retry", delivery=delivery.delivery.delivery_id)
    _relay(dash)

    assert retried.status_code == 303
    assert retried.headers["location"] == page + "?told=1"
    assert "The delivery is due again" in dash.client.get(retried.headers["location"]).text
    assert len(receiver.requests) == 2
    log = dash.client.get(page).text
    assert "submission.created · delivered" in log
    again = dash.post(page + "/retry", delivery=delivery.delivery.delivery_id)
    assert again.status_code == 422
    assert "the delivery was delivered already" in again.text


def test_the_log_pages_and_filters_by_state(
    dash: Dashboard, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(form_webhooks, "LOG_PAGE", 2)
    endpoint_id = _add(dash, "http://127.0.0.1:9/h")
    for _ in range(3):
        dash.svc.clock.advance(61)  # tests to one endpoint: one a minute
        dash.svc.run(dash.svc.services.webhooks.test, endpoint_id)
    dash.owner_signs_in()
    page = f"{_hooks(dash)}/{endpoint_id}"

    first = dash.client.get(page)
    older = re.search(r'<a href="([^"]+)">Older</a>', first.text)
    assert older is not None
    second = dash.client.get(older.group(1).replace("&amp;", "&"))
    dead = dash.client.get(page, params={"state": "dead"})
    stale = dash.client.get(page, params={"cursor": "nope"})

    assert first.text.count("<article") == 2
    assert second.text.count("<article") == 1
    assert "Newest</a>" in second.text
    assert "No deliveries in this state." in dead.text
    assert stale.status_code == 422
    assert "not valid any more" in stale.text


def test_a_disabled_endpoint_cannot_be_tested(dash: Dashboard) -> None:
    endpoint_id = _add(dash, "http://127.0.0.1:9/h")
    dash.svc.run(dash.svc.store.destinations.disable_endpoint, endpoint_id, dash.svc.clock.now())
    dash.owner_signs_in()
    page = f"{_hooks(dash)}/{endpoint_id}"

    shown = dash.client.get(page)
    refused = dash.post(page + "/test")

    assert "Send a test event" not in shown.text
    assert "disabled: it answered 410 Gone" in shown.text
    assert refused.status_code == 422
    assert "the endpoint is disabled" in refused.text
    assert dash.svc.run(dash.svc.store.deliveries.list_deliveries) == []


def test_a_member_is_refused_and_nothing_changes(dash: Dashboard) -> None:
    endpoint_id = _add(dash, "http://127.0.0.1:9/h")
    queued = dash.svc.run(dash.svc.services.webhooks.test, endpoint_id)
    dash.set_password(dash.link("member@example.com", Role.MEMBER))
    page = f"{_hooks(dash)}/{endpoint_id}"

    answers = [
        dash.client.get(_hooks(dash)),
        dash.client.get(page),
        dash.post(_hooks(dash), url="http://127.0.0.1:9/other"),
        dash.post(_hooks(dash) + "/remove", endpoint=endpoint_id, confirm="yes"),
        dash.post(page + "/test"),
        dash.post(page + "/retry", delivery=queued.delivery.delivery_id),
    ]

    assert [a.status_code for a in answers] == [403] * 6
    assert "127.0.0.1:9" not in answers[0].text + answers[1].text
    assert _endpoints(dash) == [("http://127.0.0.1:9/h", False)]
    assert len(dash.svc.run(dash.svc.store.deliveries.list_deliveries)) == 1


def test_other_workspaces_and_forms_ids_are_not_found(dash: Dashboard) -> None:
    other = dash.svc.workspace(name="Other")
    other_form = dash.svc.form(other.workspace_id)
    theirs = dash.svc.run(_services(dash).webhooks.add, other_form.form_id, "http://127.0.0.1:9/t")
    their_id = theirs.endpoint.endpoint_id
    their_delivery = dash.svc.run(dash.svc.services.webhooks.test, their_id).delivery.delivery_id
    second = dash.svc.form(dash.workspace.workspace_id, name="Second")
    sibling = dash.svc.run(_services(dash).webhooks.add, second.form_id, "http://127.0.0.1:9/s")
    sibling_id = sibling.endpoint.endpoint_id
    sibling_delivery = dash.svc.run(
        dash.svc.services.webhooks.test, sibling_id
    ).delivery.delivery_id
    mine = _add(dash, "http://127.0.0.1:9/h")
    dash.owner_signs_in()
    elsewhere = f"/dashboard/forms/{other_form.form_id}/settings/webhooks"
    page = f"{_hooks(dash)}/{mine}"

    answers = [
        dash.client.get(elsewhere),
        dash.client.get(f"{elsewhere}/{their_id}"),
        dash.post(elsewhere, url="http://127.0.0.1:9/x"),
        dash.client.get(f"{_hooks(dash)}/{their_id}"),
        dash.client.get(f"{_hooks(dash)}/{sibling_id}"),  # another form's, same workspace
        dash.post(_hooks(dash) + "/remove", endpoint=their_id, confirm="yes"),
        dash.post(_hooks(dash) + "/remove", endpoint=sibling_id, confirm="yes"),
        dash.post(f"{_hooks(dash)}/{their_id}/test"),
        dash.post(f"{_hooks(dash)}/{sibling_id}/test"),
        dash.post(page + "/retry", delivery=their_delivery),
        dash.post(page + "/retry", delivery=sibling_delivery),
        dash.post(page + "/retry", delivery="dlv_nope"),
    ]

    assert [a.status_code for a in answers] == [404] * 12
    assert [
        e.endpoint_id for e in dash.svc.run(dash.svc.services.webhooks.all, other_form.form_id)
    ] == [their_id]
    assert [
        e.endpoint_id for e in dash.svc.run(dash.svc.services.webhooks.all, second.form_id)
    ] == [sibling_id]
    assert len(dash.svc.run(dash.svc.store.deliveries.list_deliveries)) == 2


def test_csrf_and_another_site_are_refused_with_nothing_changed(dash: Dashboard) -> None:
    endpoint_id = _add(dash, "http://127.0.0.1:9/h")
    assert dash.client.get(_hooks(dash)).status_code == 303  # signed out: to sign in
    dash.owner_signs_in()
    page = f"{_hooks(dash)}/{endpoint_id}"

    answers = [
        dash.client.post(_hooks(dash), data={"url": "http://127.0.0.1:9/x"}),
        dash.post(_hooks(dash), url="http://127.0.0.1:9/x", csrf="wrong"),
        dash.client.post(
            _hooks(dash) + "/remove",
            data={"endpoint": endpoint_id, "confirm": "yes", "csrf": dash.csrf("/dashboard")},
            headers={"origin": "https://evil.example"},
        ),
        dash.client.post(page + "/test", data={}),
        dash.client.post(page + "/retry", data={"delivery": "dlv_x"}),
    ]

    assert [a.status_code for a in answers] == [403] * 5
    assert _endpoints(dash) == [("http://127.0.0.1:9/h", False)]
    assert dash.svc.run(dash.svc.store.deliveries.list_deliveries) == []
    state = DeliveryState.PENDING
    assert (
        dash.svc.run(dash.svc.store.deliveries.endpoint_deliveries, endpoint_id, state=state) == []
    )


def _queued(dash: Dashboard, endpoint_id: str, count: int) -> list[str]:
    """`count` test events queued to the endpoint: their deliveries' ids."""
    queued = []
    for _ in range(count):
        dash.svc.clock.advance(61)  # tests to one endpoint: one a minute
        queued.append(
            dash.svc.run(dash.svc.services.webhooks.test, endpoint_id).delivery.delivery_id
        )
    return queued


def _sent(dash: Dashboard, delivery_ids: list[str], *, delivered: bool) -> None:
    """The relay's report on the deliveries just claimed: delivered, or dead."""
    svc = dash.svc
    now = svc.clock.now()
    svc.run(svc.store.deliveries.claim_due, now, LEASE, 100)
    for delivery_id in delivery_ids:
        if delivered:
            svc.run(svc.store.deliveries.record_success, delivery_id, now, 200)
        else:
            svc.run(svc.store.deliveries.record_failure, delivery_id, now, "HTTP 500", None, 500)


def _states(dash: Dashboard, endpoint_id: str) -> dict[str, tuple[DeliveryState, int]]:
    records = dash.svc.run(dash.svc.store.deliveries.endpoint_deliveries, endpoint_id)
    return {r.delivery.delivery_id: (r.delivery.state, r.delivery.attempts) for r in records}


def test_retry_all_dead_makes_only_the_dead_ones_due_again(dash: Dashboard) -> None:
    endpoint_id = _add(dash, "http://127.0.0.1:9/h")
    sibling = _add(dash, "http://127.0.0.1:9/s")
    dead = _queued(dash, endpoint_id, 2)
    their_dead = _queued(dash, sibling, 1)
    _sent(dash, dead + their_dead, delivered=False)
    delivered = _queued(dash, endpoint_id, 1)
    _sent(dash, delivered, delivered=True)
    [pending] = _queued(dash, endpoint_id, 1)
    dash.owner_signs_in()
    page = f"{_hooks(dash)}/{endpoint_id}"
    shown = dash.client.get(page)
    assert "Retry all dead</button>" in shown.text
    assert f'action="{page}/retry-dead"' in shown.text

    retried = dash.post(page + "/retry-dead")

    assert retried.status_code == 303
    assert retried.headers["location"] == page + "?retried=2"
    after = dash.client.get(retried.headers["location"])
    assert "2 dead deliveries are due again" in after.text
    assert "Retry all dead</button>" not in after.text  # none dead any more
    pending_again = (DeliveryState.PENDING, 0)
    assert _states(dash, endpoint_id) == {
        dead[0]: pending_again,
        dead[1]: pending_again,
        delivered[0]: (DeliveryState.DELIVERED, 1),
        pending: (DeliveryState.PENDING, 0),
    }
    assert _states(dash, sibling) == {their_dead[0]: (DeliveryState.DEAD, 1)}
    again = dash.post(page + "/retry-dead")
    assert again.headers["location"] == page + "?retried=0"
    assert "No delivery was dead: nothing to retry." in dash.client.get(page + "?retried=0").text


def test_retry_all_dead_is_for_owners_with_the_token_and_this_forms_endpoints(
    dash: Dashboard,
) -> None:
    endpoint_id = _add(dash, "http://127.0.0.1:9/h")
    second = dash.svc.form(dash.workspace.workspace_id, name="Second")
    sibling = dash.svc.run(_services(dash).webhooks.add, second.form_id, "http://127.0.0.1:9/s")
    other = dash.svc.form(dash.svc.workspace(name="Other").workspace_id)
    theirs = dash.svc.run(_services(dash).webhooks.add, other.form_id, "http://127.0.0.1:9/t")
    endpoints = [endpoint_id, sibling.endpoint.endpoint_id, theirs.endpoint.endpoint_id]
    dead = [_queued(dash, each, 1)[0] for each in endpoints]
    _sent(dash, dead, delivered=False)
    page = f"{_hooks(dash)}/{endpoint_id}/retry-dead"
    dash.set_password(dash.link("member@example.com", Role.MEMBER))
    as_member = dash.post(page)
    dash.client.cookies.clear()
    dash.owner_signs_in()

    answers = [
        as_member,
        dash.client.post(page, data={}),  # no token
        dash.post(page, csrf="wrong"),
        dash.client.post(
            page,
            data={"csrf": dash.csrf("/dashboard")},
            headers={"origin": "https://evil.example"},
        ),
        dash.post(f"{_hooks(dash)}/{endpoints[1]}/retry-dead"),  # another form's
        dash.post(f"{_hooks(dash)}/{endpoints[2]}/retry-dead"),  # another workspace's
        dash.post(f"/dashboard/forms/{other.form_id}/settings/webhooks/{endpoints[2]}/retry-dead"),
    ]

    assert [a.status_code for a in answers] == [403, 403, 403, 403, 404, 404, 404]
    for each, delivery_id in zip(endpoints, dead, strict=True):
        assert _states(dash, each) == {delivery_id: (DeliveryState.DEAD, 1)}
