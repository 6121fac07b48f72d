"""The dashboard's submission page: fields in order, files as signed downloads, reply-to,
the spam score with its reasons, deliveries with their attempts; release, spam and
delete (after a confirmation) by members and owners with the CSRF token; no one reaches
another workspace's submission; what the visitor typed is always shown escaped. On
every store."""

from __future__ import annotations

from datetime import timedelta

import httpx2
import pytest

from intake.domain.model import OutboxEvent, Submission, SubmissionStatus
from intake.domain.users import Role
from intake.ports.submissions import CommitPlan
from tests.http.conftest import ServiceFactory
from tests.http.dashboard_support import Dashboard, isolated
from tests.http.test_uploads import Uploads, pdf

LEASE = timedelta(minutes=2)
HOOK = "https://hooks.example.com/intake"
SCRIPT = "<script>alert(1)</script>"


@pytest.fixture
def dash(make_service: ServiceFactory) -> Dashboard:
    return Dashboard(make_service())


def _submit(dash: Dashboard, fields: list[tuple[str, str]], *, spam: bool = False) -> str:
    """A submission to the dashboard's form, with one file named with markup."""
    up = Uploads(dash.svc)
    form = up.take_files(dash.form)
    if spam:
        form = dash.svc.update_form(form.form_id, spam_threshold=0.001)
        fields = [*fields, ("site", "https://example.com/")]
    answer = up.post(fields, [("cv", f"{SCRIPT}.pdf", pdf(500), "application/pdf")], form=form)
    assert answer.status_code in (200, 201, 303), answer.text
    [stored] = dash.svc.submissions(form.form_id)
    return stored.submission_id


def _page(submission_id: str) -> str:
    return f"/dashboard/submissions/{submission_id}"


def _post(dash: Dashboard, submission_id: str, action: str) -> httpx2.Response:
    token = dash.csrf(_page(submission_id))
    return dash.client.post(f"{_page(submission_id)}/{action}", data={"csrf": token})


def test_the_page_shows_fields_files_reply_to_and_deliveries(dash: Dashboard) -> None:
    svc = dash.svc
    svc.run(svc.services.webhooks.add, dash.form.form_id, HOOK)
    submission_id = _submit(
        dash,
        [
            ("zeta", "last?"),
            ("_replyto", "a+b@example.com"),
            ("_subject", "Hi <b>there</b>"),
            ("tags", "x"),
            ("tags", "y"),
            ("alpha", "first"),
        ],
    )
    svc.run(svc.store.deliveries.fan_out, svc.clock.now(), 100)
    [delivery] = svc.run(svc.store.deliveries.list_deliveries)
    now = svc.clock.now()
    svc.run(svc.store.deliveries.claim_due, now, LEASE, 100)
    svc.run(svc.store.deliveries.record_failure, delivery.delivery_id, now, "HTTP 500", now, 500)
    dash.set_password(dash.link("member@example.com", Role.MEMBER))

    page = dash.client.get(_page(submission_id))

    assert page.status_code == 200, page.text
    text = page.text
    assert text.index("zeta") < text.index("tags") < text.index("alpha")  # their order
    shown_x, shown_y = (f'<li><span class="value">{isolated(v)}</span></li>' for v in "xy")
    assert shown_x + shown_y in text
    assert 'href="mailto:a%2Bb@example.com"' in text
    assert "Hi &lt;b&gt;there&lt;/b&gt;" in text
    assert f"/v1/files/{submission_id}/0?expires=" in text  # a fresh signed link
    assert 'rel="noopener noreferrer nofollow"' in text
    # Named by where it went, the URL's host alone (its path may hold a token).
    redacted = isolated("https://hooks.example.com/…")
    assert f'Webhook to <span class="secret">{redacted}</span>: pending' in text
    assert "submission.created: created" in text
    assert "Retry now" not in text  # a member's page: retrying is for owners
    assert "<td>failed</td>" in text
    assert "500 · " + isolated("HTTP 500") in text  # the attempt's status code and error
    assert HOOK not in text  # never a destination's URL
    assert page.headers["content-security-policy"].startswith("default-src 'self'")


def test_no_reply_button_without_a_valid_address(dash: Dashboard) -> None:
    submission_id = _submit(dash, [("message", "hello")])
    dash.set_password(dash.link("owner@example.com"))

    page = dash.client.get(_page(submission_id))

    assert page.status_code == 200
    assert "mailto:" not in page.text


def test_hostile_values_are_escaped_and_never_live_links(dash: Dashboard) -> None:
    submission_id = _submit(
        dash,
        [(f"{SCRIPT}name", SCRIPT), ("site", "javascript:alert(1)"), ("_subject", SCRIPT)],
    )
    dash.set_password(dash.link("owner@example.com"))

    page = dash.client.get(_page(submission_id))

    assert page.status_code == 200, page.text
    assert SCRIPT not in page.text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page.text
    assert 'href="javascript:' not in page.text
    assert "javascript:alert(1)" in page.text  # shown as plain text


def test_the_score_is_shown_with_its_reasons_escaped_each_in_an_isolate(
    dash: Dashboard,
) -> None:
    # Reasons may quote the visitor's words (a learned token): hostile text, as any value.
    stored = Submission(
        submission_id="sub_" + "0" * 28 + "1",
        form_id=dash.form.form_id,
        workspace_id=dash.workspace.workspace_id,
        status=SubmissionStatus.SPAM,
        data={"message": "hello"},
        created_at=dash.svc.clock.now(),
        spam_score=7.2468,  # the learning filter's points are any number: shown to 0.01
        spam_reasons=("links:3", f"token:{SCRIPT}", "token:\u202egnp.exe"),
    )
    event = OutboxEvent.for_submission("evt_reasons", stored)
    svc = dash.svc
    svc.run(svc.store.submissions.commit, CommitPlan(stored, event, None, None))
    dash.set_password(dash.link("member@example.com", Role.MEMBER))

    page = dash.client.get(_page(stored.submission_id))

    assert page.status_code == 200, page.text
    shown = page.text
    assert "<dt>Spam score</dt>" in shown
    assert f'7.25 <span class="reasons">({isolated("links:3")}, ' in shown
    assert isolated("token:&lt;script&gt;alert(1)&lt;/script&gt;") in shown
    assert SCRIPT not in shown
    assert "\u202e" not in shown  # named by a marker, never acting on the page
    assert 'token:<span class="invisible-char"' in shown


def test_a_member_releases_and_marks_spam(dash: Dashboard) -> None:
    submission_id = _submit(dash, [("message", "hello")], spam=True)
    assert dash.svc.submission(submission_id).status is SubmissionStatus.SPAM
    dash.set_password(dash.link("member@example.com", Role.MEMBER))

    released = _post(dash, submission_id, "release")

    assert released.status_code == 303
    assert released.headers["location"] == _page(submission_id) + "?told=1"
    assert dash.svc.submission(submission_id).status is SubmissionStatus.ACCEPTED
    assert _post(dash, submission_id, "spam").status_code == 303
    assert dash.svc.submission(submission_id).status is SubmissionStatus.SPAM


def test_delete_asks_first_then_erases_and_goes_to_the_inbox(dash: Dashboard) -> None:
    submission_id = _submit(dash, [("message", "hello")])
    dash.set_password(dash.link("member@example.com", Role.MEMBER))

    confirm = dash.client.get(_page(submission_id) + "/delete")
    assert confirm.status_code == 200
    assert dash.svc.run(dash.svc.store.submissions.get, submission_id) is not None
    deleted = _post(dash, submission_id, "delete")

    assert deleted.status_code == 303
    assert deleted.headers["location"] == f"/dashboard/forms/{dash.form.form_id}?told=1"
    assert dash.svc.run(dash.svc.store.submissions.get, submission_id) is None
    assert dash.client.get(_page(submission_id)).status_code == 404


@pytest.mark.parametrize("action", ["release", "spam", "delete"])
def test_a_post_without_the_csrf_token_changes_nothing(dash: Dashboard, action: str) -> None:
    submission_id = _submit(dash, [("message", "hello")], spam=True)
    dash.set_password(dash.link("owner@example.com"))

    missing = dash.client.post(f"{_page(submission_id)}/{action}", data={})
    wrong = dash.client.post(f"{_page(submission_id)}/{action}", data={"csrf": "x" * 40})

    assert missing.status_code == wrong.status_code == 403
    assert dash.svc.submission(submission_id).status is SubmissionStatus.SPAM


@pytest.mark.parametrize("path", ["", "/delete"])
def test_without_a_session_the_page_goes_to_sign_in(dash: Dashboard, path: str) -> None:
    submission_id = _submit(dash, [("message", "hello")])

    page = dash.client.get(_page(submission_id) + path)
    post = dash.client.post(_page(submission_id) + "/release", data={"csrf": "x"})

    assert page.status_code == post.status_code == 303
    assert page.headers["location"] == f"/dashboard/sign-in?next={_page(submission_id)}{path}"
    assert post.headers["location"] == "/dashboard/sign-in"


def test_another_workspaces_submission_is_not_found(dash: Dashboard) -> None:
    submission_id = _submit(dash, [("message", "hello")], spam=True)
    other = dash.svc.workspace(name="Other")
    created = dash.svc.run(
        dash.accounts.users.create, "stranger@example.com", other.workspace_id, Role.OWNER
    )
    assert created.link is not None
    dash.set_password("/" + created.link.split("/", 3)[3])
    token = dash.csrf("/dashboard/settings/members")

    page = dash.client.get(_page(submission_id))
    confirm = dash.client.get(_page(submission_id) + "/delete")
    posts = [
        dash.client.post(f"{_page(submission_id)}/{action}", data={"csrf": token})
        for action in ("release", "spam", "delete")
    ]

    assert page.status_code == confirm.status_code == 404
    assert [p.status_code for p in posts] == [404, 404, 404]
    assert SCRIPT not in page.text
    assert dash.svc.submission(submission_id).status is SubmissionStatus.SPAM
    assert dash.client.get("/dashboard/submissions/%3Cb%3E").status_code == 404
