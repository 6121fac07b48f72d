"""The dashboard's actions walked in Chromium as an owner does them, with clicks and
typing: find a submission by search, release a spam one and see the real relay deliver
it to a local webhook receiver (signed) and the page show it delivered, delete one after
its confirmation, bulk-mark, export the current filter, and create (shown once) and
revoke an API key that /v1 then refuses. Each step leaves a screenshot.

The walks have a workspace of their own, so that the forms list shows only theirs, and
run on SQLite and on PostgreSQL with Redis."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page

from intake.domain import ids, webhooks
from tests.browser.conftest import Service
from tests.browser.dashboard_steps import shot, sign_in_with_the_link, submit
from tests.support.processes import run_cli
from tests.support.receiver import ReceivedRequest, Receiver

pytestmark = [pytest.mark.browser, pytest.mark.slow]

# Five spam phrases of docs/scoring.md: over the default threshold by far.
SPAM = {"name": "Deals", "message": "Buy now! Click here: backlinks, SEO services, casino."}
RELAY_PASSES = 5  # `intake relay --once` runs; the first normally delivers everything


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def service(request: pytest.FixtureRequest, service: Service) -> Service:
    """Each walk on the embedded store and on PostgreSQL with Redis, as production runs."""
    if request.param == "postgres":
        running: Service = request.getfixturevalue("postgres_service")
        return running
    return service


@pytest.fixture(scope="module")
def walk_workspace(service: Service) -> str:
    created = service.intake("workspace", "create", "--name", "Walks", "--plan", "starter")
    workspace: str = created["workspace_id"]
    return workspace


def _private_ok(service: Service) -> dict[str, str]:
    """The service's settings, letting webhooks reach a receiver on this machine."""
    return {**service.env, "INTAKE_WEBHOOK_ALLOW_PRIVATE": "true"}


def _received(receiver: Receiver, submission_id: str) -> ReceivedRequest | None:
    for request in receiver.requests:
        if json.loads(request.body).get("submission_id") == submission_id:
            return request
    return None


def _relay_until_received(service: Service, receiver: Receiver, submission_id: str) -> bytes:
    """The real relay, run to completion on the service's store, pass by pass."""
    for _ in range(RELAY_PASSES):
        run_cli(_private_ok(service), "relay", "--once")
        found = _received(receiver, submission_id)
        if found is not None:
            return found.body
    pytest.fail(f"the relay delivered nothing for {submission_id}: {receiver.requests}")


def _open_inbox(page: Page, service: Service, form_name: str) -> None:
    page.goto(f"{service.base}/dashboard")
    page.get_by_role("link", name=form_name, exact=True).click()
    page.wait_for_load_state()


def _status(service: Service, form_id: str) -> dict[str, str]:
    return {s["submission_id"]: s["status"] for s in service.submissions(form_id)}


def test_an_owner_finds_releases_to_a_webhook_and_deletes(
    service: Service, walk_workspace: str, page: Page, receiver: Receiver, tmp_path: Path
) -> None:
    form = service.create_form(walk_workspace, "--name", "Walk triage")
    added = run_cli(
        _private_ok(service), "webhook", "add", "--form", form["form_id"], "--url", receiver.url()
    )
    key = form["public_form_key"]
    wanted = submit(service, key, {"name": "Ada", "message": "the zebra-needle order"})
    other = submit(service, key, {"name": "Bo", "message": "a plain hello"})
    spam = submit(service, key, SPAM)
    assert _status(service, form["form_id"])[spam] == "spam"
    sign_in_with_the_link(service, page, walk_workspace, "walker@example.com")
    shot(page, tmp_path, "01-forms")

    # Search: only the matching submission is listed, and it opens.
    _open_inbox(page, service, "Walk triage")
    page.fill("#q", "zebra-needle")
    page.get_by_role("button", name="Filter").click()
    page.wait_for_load_state()
    shot(page, tmp_path, "02-search")
    rows = page.locator("table.inbox tbody tr")
    assert rows.count() == 1
    rows.get_by_role("link").click()
    page.wait_for_load_state()
    assert wanted in page.locator("h1").inner_text()

    # Release the spam one, from the spam tab.
    page.get_by_role("link", name="Back to the inbox").click()
    page.get_by_role("navigation", name="Status").get_by_role("link", name="spam").click()
    page.wait_for_load_state()
    page.locator("table.inbox tbody tr").get_by_role("link").click()
    page.wait_for_load_state()
    assert spam in page.locator("h1").inner_text()
    page.get_by_role("button", name="Release (accept)").click()
    page.wait_for_load_state()
    shot(page, tmp_path, "03-released")
    assert _status(service, form["form_id"])[spam] == "accepted"

    # The real relay delivers the released submission, signed with the endpoint's secret.
    body = _relay_until_received(service, receiver, spam)
    request = _received(receiver, spam)
    assert request is not None
    headers = request.headers
    expected = webhooks.signature(
        added["secret"], headers["webhook-id"], int(headers["webhook-timestamp"]), body
    )
    assert expected in headers["webhook-signature"].split()
    event = json.loads(body)
    assert event["type"] == "submission.created"
    assert event["status"] == "accepted"
    assert event["data"]["message"] == SPAM["message"]
    page.reload()
    deliveries = page.locator("section[aria-labelledby=deliveries]").inner_text()
    shot(page, tmp_path, "04-delivered")
    # The timeline names the destination, then the event: "Webhook to URL: delivered".
    assert re.search(r"Webhook to \S+: delivered\s+submission\.created: created", deliveries)

    # Delete another, through its confirmation.
    page.goto(f"{service.base}/dashboard/submissions/{other}")
    page.get_by_role("link", name="Delete…").click()
    page.wait_for_load_state()
    shot(page, tmp_path, "05-delete-confirm")
    assert other in _status(service, form["form_id"])  # not yet: asked first
    page.get_by_role("button", name="Delete for good").click()
    page.wait_for_load_state()
    shot(page, tmp_path, "06-deleted")
    assert other not in _status(service, form["form_id"])
    gone = page.goto(f"{service.base}/dashboard/submissions/{other}")
    assert gone is not None
    assert gone.status == 404


def _pick(page: Page, count: int) -> None:
    boxes = page.locator("table.inbox tbody input[type=checkbox]")
    assert boxes.count() >= count
    for index in range(count):
        boxes.nth(index).check()


def _apply(page: Page, action: str) -> None:
    page.select_option("#action", action)
    page.get_by_role("button", name="Apply").click()
    page.wait_for_load_state()


def test_an_owner_bulk_marks_and_exports_the_current_filter(
    service: Service, walk_workspace: str, page: Page, tmp_path: Path
) -> None:
    form = service.create_form(walk_workspace, "--name", "Walk bulk")
    key = form["public_form_key"]
    ids = [submit(service, key, {"name": f"N{n}", "message": f"order {n}"}) for n in range(4)]
    sign_in_with_the_link(service, page, walk_workspace, "bulk@example.com")
    _open_inbox(page, service, "Walk bulk")

    _pick(page, 3)
    _apply(page, "spam")
    shot(page, tmp_path, "07-bulk-spam")
    assert sorted(_status(service, form["form_id"]).values()) == ["accepted"] + ["spam"] * 3
    page.get_by_role("navigation", name="Status").get_by_role("link", name="spam").click()
    page.wait_for_load_state()
    _pick(page, 2)
    _apply(page, "release")
    shot(page, tmp_path, "08-bulk-released")
    assert sorted(_status(service, form["form_id"]).values()) == ["accepted"] * 3 + ["spam"]

    # Export what the accepted tab shows, searched down to two submissions.
    page.get_by_role("navigation", name="Status").get_by_role("link", name="accepted").click()
    page.fill("#q", "order")
    page.get_by_role("button", name="Filter").click()
    page.wait_for_load_state()
    shown = page.locator("table.inbox tbody tr").count()
    assert shown == 3
    exported: dict[str, str] = {}
    for fmt in ("csv", "jsonl"):
        with page.expect_download() as download:
            page.locator("p.exports").get_by_role("link", name=fmt, exact=True).click()
        path = tmp_path / f"export.{fmt}"
        download.value.save_as(path)
        exported[fmt] = path.read_text(encoding="utf-8")
    shot(page, tmp_path, "09-exported")

    status = _status(service, form["form_id"])
    accepted = {i for i in ids if status[i] == "accepted"}
    lines = [json.loads(line) for line in exported["jsonl"].splitlines() if line]
    assert {line["submission_id"] for line in lines} == accepted
    assert {line["data"]["message"] for line in lines} <= {f"order {n}" for n in range(4)}
    rows = list(csv.DictReader(io.StringIO(exported["csv"])))
    assert {row["submission_id"] for row in rows} == accepted


def test_an_api_key_is_shown_once_works_and_is_refused_once_revoked(
    service: Service, walk_workspace: str, page: Page, tmp_path: Path
) -> None:
    sign_in_with_the_link(service, page, walk_workspace, "keys@example.com")
    page.get_by_role("link", name="Settings", exact=True).click()
    page.wait_for_load_state()
    page.check("#scope-read")
    page.uncheck("#scope-submit")
    page.get_by_role("button", name="Create key").click()
    page.wait_for_load_state()
    shot(page, tmp_path, "10-key-created")
    secret = page.locator(".notice code.secret").inner_text().strip()
    bearer = {"Authorization": f"Bearer {secret}"}

    listed = httpx.get(f"{service.base}/v1/forms", headers=bearer)
    assert listed.status_code == 200, listed.text
    # A reload of the answer page makes no second key and shows this one no more.
    rows = page.locator("table tbody tr").count()
    page.reload()
    assert secret not in page.content()
    assert "was shown once, when it was made" in page.content()
    assert page.locator("table tbody tr").count() == rows
    page.goto(f"{service.base}/dashboard/settings")
    assert secret not in page.content()  # shown once

    prefix = secret[: len(ids.API_KEY_PREFIX) + 6]  # what the keys table shows of it
    page.locator("tr", has_text=prefix).get_by_role("button", name="Revoke").click()
    page.wait_for_load_state()
    shot(page, tmp_path, "11-revoke-confirm")
    assert httpx.get(f"{service.base}/v1/forms", headers=bearer).status_code == 200
    page.locator("[role=alertdialog]").get_by_role("button").click()
    page.wait_for_load_state()
    shot(page, tmp_path, "12-revoked")

    assert httpx.get(f"{service.base}/v1/forms", headers=bearer).status_code == 401
