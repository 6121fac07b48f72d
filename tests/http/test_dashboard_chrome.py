"""What every dashboard page has around its content: a skip link to it, a favicon served
at its content's address, a title naming the form; and sign-in leading back to the page
that was asked for, a path of the dashboard only (never another site)."""

from __future__ import annotations

import re

import pytest

from intake.entrypoints.http.dashboard.static_files import static_file, static_url
from tests.http.conftest import ServiceFactory
from tests.http.dashboard_support import PASSWORD, Dashboard


@pytest.fixture
def dash(make_service: ServiceFactory) -> Dashboard:
    return Dashboard(make_service())


def test_every_page_has_a_skip_link_and_the_favicon(dash: Dashboard) -> None:
    sign_in = dash.client.get("/dashboard/sign-in").text
    dash.owner_signs_in()
    inbox = dash.client.get(f"/dashboard/forms/{dash.form.form_id}").text

    for text in (sign_in, inbox):
        body = text.split("<body>", 1)[1]
        assert body.lstrip().startswith('<a class="skip-link" href="#main">')
        assert '<main id="main"' in body
        assert f'<link rel="icon" href="{static_url("favicon.svg")}" type="image/svg+xml">' in text


def test_static_files_are_served_at_their_contents_address(dash: Dashboard) -> None:
    favicon = static_file("favicon.svg")
    url = static_url("favicon.svg")

    served = dash.client.get(url)
    script = dash.client.get(static_url("dashboard.js"))

    assert re.fullmatch(r"/dashboard/static/favicon\.[0-9a-f]{16}\.svg", url)
    assert served.status_code == 200
    assert served.content == favicon.body
    assert served.headers["content-type"] == "image/svg+xml"
    assert served.headers["cache-control"] == "public, max-age=31536000, immutable"
    assert script.headers["content-type"].startswith("text/javascript")
    for wrong in (
        url.replace(favicon.digest, "0" * 16),
        "/dashboard/static/favicon.0123456789abcdef.png",
        f"/dashboard/static/nothing.{favicon.digest}.svg",
        f"/dashboard/static/..%2F__init__.{favicon.digest}.svg",
    ):
        assert dash.client.get(wrong).status_code == 404, wrong


def test_a_forms_pages_name_it_in_their_title(dash: Dashboard) -> None:
    form = dash.svc.form(dash.workspace.workspace_id, name="Contact \u202eus")
    dash.owner_signs_in()

    inbox = dash.client.get(f"/dashboard/forms/{form.form_id}").text
    settings = dash.client.get(f"/dashboard/forms/{form.form_id}/settings").text
    hostile = dash.client.get(f"/dashboard/forms/{dash.form.form_id}").text

    assert "<title>Inbox · Contact us · intake</title>" in inbox  # the override dropped
    assert "<title>Form settings · Contact us · intake</title>" in settings
    assert "<title>Inbox · &lt;script&gt;alert(1)&lt;/script&gt; · intake</title>" in hostile


def test_sign_in_returns_to_the_page_asked_for(dash: Dashboard) -> None:
    dash.set_password(dash.link("ada@example.com"))
    dash.new_browser()
    asked = f"/dashboard/forms/{dash.form.form_id}?status=spam&q=a"

    away = dash.client.get(asked)
    form = dash.client.get(away.headers["location"])
    signed = dash.sign_in_to(away.headers["location"], "ada@example.com", PASSWORD)

    assert away.headers["location"] == (
        f"/dashboard/sign-in?next=/dashboard/forms/{dash.form.form_id}%3Fstatus%3Dspam%26q%3Da"
    )
    assert 'name="next" value="' + asked.replace("&", "&amp;") + '"' in form.text
    assert signed.status_code == 303
    assert signed.headers["location"] == asked
    # Signed in already, the sign-in page leads there too.
    again = dash.client.get(away.headers["location"])
    assert again.headers["location"] == asked


@pytest.mark.parametrize(
    "wanted",
    [
        "https://evil.example/dashboard",
        "//evil.example/dashboard",
        "/\\evil.example",
        "/dashboard/../evil",
        # Browsers read an encoded dot as a dot: these lead to /v1/forms, off the dashboard.
        "/dashboard/%2e%2e/v1/forms",
        "/dashboard/.%2E/v1/forms",
        "/dashboard/forms/%2e%2e/%2E%2e/v1/forms",
        "/dashboard/%2e/%2e%2e/v1/forms",
        "/dashboard//evil.example",
        "/dashboardx",
        "/v1/forms",
        "/dashboard/sign-in",
        "/dashboard/sign-out",
        "/dashboard\r\nLocation: https://evil.example",
        "javascript:alert(1)",
        "/dashboard/" + "x" * 2000,
    ],
)
def test_sign_in_never_leads_elsewhere(dash: Dashboard, wanted: str) -> None:
    dash.set_password(dash.link("ada@example.com"))
    dash.new_browser()

    form = dash.client.get("/dashboard/sign-in", params={"next": wanted})
    signed = dash.sign_in_to("/dashboard/sign-in", "ada@example.com", PASSWORD, next_path=wanted)

    assert 'name="next"' not in form.text
    assert signed.status_code == 303
    assert signed.headers["location"] == "/dashboard"


@pytest.mark.parametrize("path", ["/dashboard/nope", "/dashboard/forms", "/dashboard/sign-out"])
def test_an_unknown_dashboard_address_answers_the_dashboards_own_page(
    dash: Dashboard, path: str
) -> None:
    """Not the submission endpoints' "This form does not exist": a mistyped or stale
    address of the dashboard (or a post-only one opened) gets a page of the dashboard."""
    answer = dash.client.get(path, headers={"Accept": "text/html"})

    assert answer.status_code in (404, 405)
    assert "<title>Not found · intake</title>" in answer.text
    assert '<main id="main"' in answer.text
    assert "does not exist" not in answer.text
