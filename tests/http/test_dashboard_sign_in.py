"""The dashboard's sign-in: links that set a password once within 24 hours, one answer for
every wrong sign-in, rate limits, CSRF, server-side sessions that end on sign-out,
password change and removal; on every store."""

from __future__ import annotations

import hashlib
import re

import pytest

from tests.http.conftest import PEER_HEADER, ServiceFactory
from tests.http.dashboard_support import CSRF, PASSWORD, Dashboard


@pytest.fixture
def dash(make_service: ServiceFactory) -> Dashboard:
    return Dashboard(make_service())


def test_a_link_sets_the_password_and_signs_in(dash: Dashboard) -> None:
    answer = dash.set_password(dash.link())

    assert answer.status_code == 303
    assert answer.headers["location"] == "/dashboard"
    cookie = answer.headers["set-cookie"]
    assert "intake_session=" in cookie
    assert "HttpOnly" in cookie
    assert "SameSite=lax" in cookie
    assert "Path=/dashboard" in cookie
    assert "Secure" not in cookie  # the base URL is http here
    home = dash.client.get("/dashboard")
    assert home.status_code == 200
    assert "ada@example.com" in home.text
    assert dash.form.form_id in home.text


def test_every_value_on_the_page_is_escaped_and_the_headers_are_strict(dash: Dashboard) -> None:
    dash.set_password(dash.link())

    home = dash.client.get("/dashboard")

    assert "<script>alert(1)</script>" not in home.text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in home.text
    assert "Acme &lt;b&gt;&amp;&lt;/b&gt;" in home.text
    assert "<script" not in home.text  # no script of its own either
    policy = home.headers["content-security-policy"]
    assert "default-src 'self'" in policy
    assert "frame-ancestors 'none'" in policy
    assert "unsafe-inline" not in policy
    assert home.headers["x-frame-options"] == "DENY"
    assert home.headers["referrer-policy"] == "same-origin"


def test_a_link_works_once(dash: Dashboard) -> None:
    link = dash.link()
    assert dash.set_password(link).status_code == 303
    dash.new_browser()

    shown = dash.client.get(link)

    assert shown.status_code == 410
    assert "cannot be used" in shown.text
    assert 'type="password"' not in shown.text


def test_a_used_link_answers_410_to_the_password_too(dash: Dashboard) -> None:
    link = dash.link()
    assert dash.set_password(link).status_code == 303
    dash.new_browser()
    token = dash.csrf("/dashboard/sign-in")  # this browser's own form cookie

    again = dash.client.post(
        link,
        data={
            "csrf": token,
            "password": "another long password",
            "confirm": "another long password",
        },
    )

    assert again.status_code == 410
    assert "intake_session" not in again.headers.get("set-cookie", "")
    assert dash.sign_in("ada@example.com", "another long password").status_code == 401


def test_an_unknown_or_expired_link_answers_410_before_any_password(dash: Dashboard) -> None:
    link = dash.link()

    unknown = dash.client.get("/dashboard/sign-in/abc")
    long_one = dash.client.get("/dashboard/sign-in/" + "a" * 500)
    dash.svc.clock.advance(24 * 3600)
    expired = dash.client.get(link)

    for answer in (unknown, long_one, expired):
        assert answer.status_code == 410
        assert 'type="password"' not in answer.text
        assert "cannot be used" in answer.text


def test_a_link_names_its_account_for_a_password_manager(dash: Dashboard) -> None:
    page = dash.client.get(dash.link("Ada.Lovelace@example.com"))

    assert page.status_code == 200
    username = re.search(r"<input[^>]*autocomplete=\"username\"[^>]*>", page.text)
    assert username is not None
    assert 'value="ada.lovelace@example.com"' in username.group(0)
    assert "readonly" in username.group(0)
    assert 'autocomplete="new-password"' in page.text


def test_a_short_password_is_refused_and_the_link_kept(dash: Dashboard) -> None:
    link = dash.link()

    short = dash.set_password(link, "too short")

    assert short.status_code == 422
    assert "at least 12 characters" in short.text
    assert dash.set_password(link).status_code == 303


def test_right_wrong_and_unknown_sign_ins(dash: Dashboard) -> None:
    dash.set_password(dash.link())
    dash.new_browser()

    wrong = dash.sign_in("ada@example.com", "not the password")
    unknown = dash.sign_in("nobody@example.com", "not the password")
    right = dash.sign_in("ADA@example.com ", PASSWORD)

    assert wrong.status_code == unknown.status_code == 401
    assert wrong.text.replace("ada@", "X@") == unknown.text.replace("nobody@", "X@")
    assert "intake_session" not in wrong.headers.get("set-cookie", "")
    assert right.status_code == 303
    assert dash.client.get("/dashboard").status_code == 200


def test_a_user_without_a_password_yet_gets_the_same_answer(dash: Dashboard) -> None:
    dash.link("new@example.com")

    answer = dash.sign_in("new@example.com", "anything at all")

    assert answer.status_code == 401


def test_sign_in_is_limited_per_client_address(dash: Dashboard) -> None:
    dash.set_password(dash.link())
    dash.new_browser()
    peer = {PEER_HEADER: "198.51.100.7"}
    for n in range(10):
        assert dash.sign_in(f"guess{n}@example.com", "wrong", peer).status_code == 401

    refused = dash.sign_in("ada@example.com", PASSWORD, peer)

    assert refused.status_code == 429
    wait = int(refused.headers["retry-after"])
    assert 0 < wait <= 15 * 60
    minutes = -(-wait // 60)
    assert f"try again in {minutes} minute" in refused.text
    # Another client is not held back by it.
    assert (
        dash.sign_in("ada@example.com", PASSWORD, {PEER_HEADER: "198.51.100.8"}).status_code == 303
    )


def test_sign_in_is_limited_per_account(dash: Dashboard) -> None:
    dash.set_password(dash.link())
    dash.new_browser()
    for n in range(20):
        answer = dash.sign_in("ada@example.com", "wrong", {PEER_HEADER: f"192.0.2.{n}"})
        assert answer.status_code == 401

    refused = dash.sign_in("ada@example.com", PASSWORD, {PEER_HEADER: "192.0.2.200"})

    assert refused.status_code == 429


def test_posts_without_the_csrf_token_are_refused(dash: Dashboard) -> None:
    link = dash.link()
    no_token = dash.client.post(link, data={"password": PASSWORD, "confirm": PASSWORD})
    assert no_token.status_code == 403
    dash.set_password(link)

    bad_sign_out = dash.client.post("/dashboard/sign-out", data={"csrf": "forged"})
    other_site = dash.client.post(
        "/dashboard/sign-out",
        data={"csrf": dash.csrf("/dashboard")},
        headers={"origin": "https://evil.example"},
    )
    bad_sign_in = dash.client.post(
        "/dashboard/sign-in", data={"email": "ada@example.com", "password": PASSWORD}
    )

    assert bad_sign_out.status_code == other_site.status_code == bad_sign_in.status_code == 403
    assert dash.client.get("/dashboard").status_code == 200  # still signed in


def test_sign_out_ends_the_session_server_side(dash: Dashboard) -> None:
    dash.set_password(dash.link())
    stolen = dict(dash.client.cookies)

    out = dash.client.post("/dashboard/sign-out", data={"csrf": dash.csrf("/dashboard")})

    assert out.status_code == 303
    assert out.headers["location"] == "/dashboard/sign-in"
    dash.new_browser()
    dash.client.cookies.update(stolen)
    assert dash.client.get("/dashboard").headers["location"] == "/dashboard/sign-in"


def test_a_session_id_planted_before_sign_in_is_not_used(dash: Dashboard) -> None:
    dash.set_password(dash.link())
    dash.new_browser()
    dash.client.cookies.set("intake_session", "planted-by-someone", path="/dashboard")

    answer = dash.sign_in("ada@example.com", PASSWORD)

    assert answer.status_code == 303
    assert "intake_session=" in answer.headers["set-cookie"]
    assert "planted-by-someone" not in answer.headers["set-cookie"]
    dash.new_browser()
    dash.client.cookies.set("intake_session", "planted-by-someone", path="/dashboard")
    assert dash.client.get("/dashboard").status_code == 303


def test_setting_a_password_again_ends_the_other_sessions(dash: Dashboard) -> None:
    dash.set_password(dash.link())
    first_browser = dict(dash.client.cookies)
    dash.new_browser()

    user = dash.svc.run(dash.svc.store.users.find_by_email, "ada@example.com")
    assert user is not None
    link = dash.svc.run(dash.accounts.users._new_link, user.user_id, dash.svc.clock.now())
    assert dash.set_password("/" + link.split("/", 3)[3], "a brand new password").status_code == 303
    assert dash.client.get("/dashboard").status_code == 200

    dash.new_browser()
    dash.client.cookies.update(first_browser)
    assert dash.client.get("/dashboard").status_code == 303


def test_removing_a_user_ends_their_sessions(dash: Dashboard) -> None:
    dash.link("second.owner@example.com")  # the workspace keeps an owner
    dash.set_password(dash.link())
    assert dash.client.get("/dashboard").status_code == 200

    dash.svc.run(dash.accounts.users.remove, "ada@example.com")

    assert dash.client.get("/dashboard").status_code == 303


def test_an_idle_session_expires(dash: Dashboard) -> None:
    dash.set_password(dash.link())
    dash.svc.clock.advance(2 * 24 * 3600)

    assert dash.client.get("/dashboard").status_code == 303


def test_not_signed_in_goes_to_the_sign_in_page(dash: Dashboard) -> None:
    home = dash.client.get("/dashboard")
    page = dash.client.get("/dashboard/sign-in")

    assert home.status_code == 303
    assert home.headers["location"] == "/dashboard/sign-in"
    assert page.status_code == 200
    assert 'type="password"' in page.text
    assert "intake_form=" in page.headers["set-cookie"]


def test_the_stylesheet_is_served_from_the_package(dash: Dashboard) -> None:
    answer = dash.client.get("/dashboard/static/dashboard.css")

    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/css")
    assert ":focus-visible" in answer.text
    assert answer.headers["cache-control"] == "public, max-age=300"


def test_pages_link_the_stylesheet_at_its_content_address(dash: Dashboard) -> None:
    page = dash.client.get("/dashboard/sign-in")
    linked = re.search(r'<link rel="stylesheet" href="([^"]+)">', page.text)
    assert linked is not None
    address = linked.group(1)
    body = dash.client.get("/dashboard/static/dashboard.css").content
    digest = hashlib.sha256(body).hexdigest()[:16]

    answer = dash.client.get(address)
    stale = dash.client.get("/dashboard/static/dashboard.0123456789abcdef.css")

    assert address == f"/dashboard/static/dashboard.{digest}.css"
    assert answer.status_code == 200
    assert answer.content == body
    assert answer.headers["cache-control"] == "public, max-age=31536000, immutable"
    assert stale.status_code == 404


def test_unreadable_or_oversized_posts_are_refused_not_failed(dash: Dashboard) -> None:
    token = dash.csrf("/dashboard/sign-in")

    as_json = dash.client.post("/dashboard/sign-in", json={"csrf": token})
    garbage = dash.client.post(
        "/dashboard/sign-in",
        content=b"\xff\x00--not-a-form",
        headers={"content-type": "multipart/form-data; boundary=x"},
    )
    huge = dash.client.post(
        "/dashboard/sign-in", data={"csrf": token, "email": "a" * 20_000, "password": "x"}
    )

    assert as_json.status_code == garbage.status_code == huge.status_code == 403


def test_a_form_cookie_planted_for_the_whole_host_decides_nothing(dash: Dashboard) -> None:
    dash.set_password(dash.link())
    dash.new_browser()
    own, planted = "o" * 40, "p" * 40
    # The browser sends the dashboard's own cookie (path /dashboard) first.
    both = {"cookie": f"intake_form={own}; intake_form={planted}"}
    form = {"email": "ada@example.com", "password": PASSWORD}

    page = dash.client.get("/dashboard/sign-in", headers=both)
    with_planted = dash.client.post(
        "/dashboard/sign-in", data={**form, "csrf": planted}, headers=both
    )
    with_own = dash.client.post("/dashboard/sign-in", data={**form, "csrf": own}, headers=both)

    found = CSRF.search(page.text)
    assert found is not None
    assert found.group(1) not in (own, planted)
    assert f"intake_form={found.group(1)}" in page.headers["set-cookie"]
    assert with_planted.status_code == 403
    assert with_own.status_code == 303
