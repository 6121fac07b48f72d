"""A form's settings in the dashboard, on every store: owners save every setting at once
through the service and the checks of PATCH /v1/forms/{id} and see them take effect on
real submissions; a refused value saves nothing; pause, resume and key rotation; the
HTML snippet; members refused, other workspaces' forms not found, no secret shown."""

from __future__ import annotations

import html
import re

import httpx2
import pytest

from intake.config import Settings
from intake.domain.model import (
    Challenge,
    ChallengeProvider,
    FieldRule,
    Form,
    FormMode,
    RuleKind,
)
from intake.domain.users import Role
from intake.entrypoints.http.client_script import client_asset
from tests.http.conftest import (
    ServiceFactory,
    assert_error,
)
from tests.http.dashboard_support import Dashboard, isolated

# What the page posts for a form left as the fixture makes it (uploads off: unticked).
UNCHANGED = {
    "name": "Contact",
    "allowed_origins": "",
    "challenge_provider": "",
    "challenge_secret": "",
    "redirect_url": "",
    "spam_threshold": "5",
    "rules": "",
    "allowed_types": "image/*, application/pdf",
    "max_file_size": "1048576",
    "max_total_size": "2097152",
    "max_files": "3",
}
SECRET = "0x4AAAAAAA-the-turnstile-secret"
SHOP = "https://shop.example"


@pytest.fixture
def dash(make_service: ServiceFactory) -> Dashboard:
    return Dashboard(make_service())


class FormSettings:
    """The settings pages of the dashboard's form, as a browser drives them."""

    def __init__(self, dash: Dashboard) -> None:
        self.dash = dash
        self.path = f"/dashboard/forms/{dash.form.form_id}/settings"

    def owner(self) -> FormSettings:
        self.dash.set_password(self.dash.link("owner@example.com"))
        return self

    def member(self) -> FormSettings:
        self.dash.set_password(self.dash.link("member@example.com", Role.MEMBER))
        return self

    def save(self, **changed: str) -> httpx2.Response:
        token = self.dash.csrf("/dashboard/password")
        return self.dash.client.post(self.path, data={**UNCHANGED, **changed, "csrf": token})

    def save_without_csrf(self, **changed: str) -> httpx2.Response:
        return self.dash.client.post(self.path, data={**UNCHANGED, **changed})

    def post(self, action: str, csrf: bool = True) -> httpx2.Response:
        data = {"csrf": self.dash.csrf("/dashboard/password")} if csrf else {}
        return self.dash.client.post(f"{self.path}/{action}", data=data)

    def stored(self) -> Form:
        return self.dash.svc.run(self.dash.svc.services.forms.get, self.dash.form.form_id)

    def submit(self, origin: str | None = None, key: str | None = None) -> httpx2.Response:
        key = key or self.stored().public_form_key
        return self.dash.svc.public(key, data={"email": "ada@example.com"}, origin=origin)


@pytest.fixture
def pages(dash: Dashboard) -> FormSettings:
    return FormSettings(dash)


def test_an_owner_sees_the_settings_and_the_snippet_escaped(pages: FormSettings) -> None:
    pages.owner()

    page = pages.dash.client.get(pages.path)

    assert page.status_code == 200
    assert page.headers["cache-control"] == "no-store"
    assert "<script>alert(1)</script>" not in page.text
    assert f"Settings: {isolated('&lt;script&gt;alert(1)&lt;/script&gt;')}</h1>" in page.text
    assert f'href="{pages.path}" aria-current="page">Settings</a>' in page.text
    key = pages.stored().public_form_key
    # The snippet is text on the page: its markup escaped, posting to this service.
    assert f"&lt;form method=&#34;post&#34; action=&#34;http://testserver/f/{key}&#34;" in (
        page.text
    )
    assert 'name="_gotcha"' not in page.text
    assert "&lt;input type=&#34;text&#34; name=&#34;_gotcha&#34;" in page.text
    assert 'id="snippet-text" class="snippet" readonly' in page.text
    inbox = pages.dash.client.get(f"/dashboard/forms/{pages.dash.form.form_id}")
    assert f'href="{pages.path}"' in inbox.text  # owners reach it from the inbox


def test_a_member_is_refused_every_settings_page_and_action(pages: FormSettings) -> None:
    before = pages.dash.form
    pages.member()

    inbox = pages.dash.client.get(f"/dashboard/forms/{before.form_id}")
    answers = [
        pages.dash.client.get(pages.path),
        pages.save(name="Taken over"),
        pages.post("pause"),
        pages.dash.client.get(pages.path + "/rotate-key"),
        pages.post("rotate-key"),
    ]

    assert inbox.status_code == 200
    assert pages.path not in inbox.text  # no settings link for a member
    assert [answer.status_code for answer in answers] == [403] * 5
    assert pages.stored() == before


def test_another_workspaces_form_and_an_unknown_id_are_not_found(dash: Dashboard) -> None:
    other = dash.svc.form(dash.svc.workspace(name="Other").workspace_id, name="Theirs")
    FormSettings(dash).owner()

    for form_id in (other.form_id, "frm_unknown"):
        path = f"/dashboard/forms/{form_id}/settings"
        token = dash.csrf("/dashboard/password")
        answers = [
            dash.client.get(path),
            dash.client.post(path, data={**UNCHANGED, "csrf": token, "name": "Mine"}),
            dash.client.post(path + "/pause", data={"csrf": token}),
            dash.client.get(path + "/rotate-key"),
            dash.client.post(path + "/rotate-key", data={"csrf": token}),
        ]
        assert [answer.status_code for answer in answers] == [404] * 5
    assert dash.svc.run(dash.svc.services.forms.get, other.form_id) == other


def test_saved_settings_take_effect_on_real_submissions(pages: FormSettings) -> None:
    pages.owner()

    saved = pages.save(
        name="  Quotes  ",
        allowed_origins=f"{SHOP}\n\n https://*.acme.example \n",
        redirect_url="https://shop.example/thanks",
        spam_threshold="7.5",
        rules="email:required\nmessage:max_length=20",
    )

    assert saved.status_code == 303
    assert saved.headers["location"] == pages.path + "?saved=1"
    form = pages.stored()
    assert form.name == "Quotes"
    assert form.allowed_origins == (SHOP, "https://*.acme.example")
    assert form.redirect_url == "https://shop.example/thanks"
    assert form.spam_threshold == 7.5
    assert form.rules == (
        FieldRule("email", RuleKind.REQUIRED),
        FieldRule("message", RuleKind.MAX_LENGTH, 20),
    )
    assert_error(pages.submit(origin="https://evil.example"), "origin_not_allowed")
    assert pages.submit(origin=SHOP).status_code == 201
    too_long = pages.dash.svc.public(
        form.public_form_key, data={"email": "a@example.com", "message": "x" * 21}, origin=SHOP
    )
    assert_error(too_long, "validation_failed")
    page = pages.dash.client.get(saved.headers["location"])
    assert "Settings saved." in page.text
    assert "message:max_length=20" in page.text  # the rules as they are typed
    cleared = pages.save(name="Quotes")  # empty lists and redirect clear them
    assert cleared.status_code == 303
    assert (pages.stored().allowed_origins, pages.stored().rules) == ((), ())
    assert pages.stored().redirect_url is None


def test_sizes_are_typed_and_shown_in_kb_and_mb(pages: FormSettings) -> None:
    pages.owner()

    saved = pages.save(uploads="on", max_file_size="1.5 MB", max_total_size="2048kb")
    shown = pages.dash.client.get(pages.path).text
    odd = pages.save(uploads="on", max_file_size="1500", max_total_size="3 MB")
    odd_shown = pages.dash.client.get(pages.path).text
    refused = pages.save(uploads="on", max_file_size="1.5 parsecs")

    assert saved.status_code == odd.status_code == 303
    policy = pages.stored().uploads
    assert policy is not None
    assert (policy.max_file_size, policy.max_total_size) == (1500, 3 * 1024 * 1024)
    assert 'id="max_file_size" name="max_file_size" inputmode="numeric" value="1536 KB"' in shown
    assert 'name="max_total_size" inputmode="numeric" value="2 MB"' in shown
    assert 'name="max_file_size" inputmode="numeric" value="1500"' in odd_shown  # exact
    assert refused.status_code == 422
    assert "max_file_size is a whole number." in refused.text


def test_uploads_turn_on_with_their_limits_and_off(pages: FormSettings) -> None:
    pages.owner()

    on = pages.save(uploads="on", allowed_types="application/pdf, image/*", max_files="2")

    assert on.status_code == 303
    policy = pages.stored().uploads
    assert policy is not None
    assert policy.allowed_types == ("application/pdf", "image/*")
    assert (policy.max_file_size, policy.max_total_size, policy.max_files) == (
        1048576,
        2097152,
        2,
    )
    page = pages.dash.client.get(pages.path)
    assert "multipart/form-data" in html.unescape(page.text)  # the snippet sends files
    assert pages.save().status_code == 303  # unticked: off
    assert pages.stored().uploads is None


def test_the_challenge_secret_is_kept_never_shown(pages: FormSettings) -> None:
    pages.owner()

    chosen = pages.save(challenge_provider="turnstile", challenge_secret=SECRET)
    again = pages.save(challenge_provider="turnstile", name="Renamed")  # empty: kept
    page = pages.dash.client.get(pages.path)

    assert (chosen.status_code, again.status_code) == (303, 303)
    assert pages.stored().challenge == Challenge(ChallengeProvider.TURNSTILE, SECRET)
    assert SECRET not in page.text
    assert '<option value="turnstile" selected>' in page.text
    assert "cf-turnstile" in page.text  # the snippet has the widget
    other = pages.save(challenge_provider="hcaptcha")  # a new provider needs its secret
    assert other.status_code == 422
    assert SECRET not in other.text
    assert pages.stored().challenge == Challenge(ChallengeProvider.TURNSTILE, SECRET)
    assert pages.save(challenge_provider="").status_code == 303
    assert pages.stored().challenge is None


@pytest.mark.parametrize(
    ("field", "value", "setting", "message"),
    [
        ("name", "   ", "name", "A form&#39;s name cannot be empty."),
        (
            "allowed_origins",
            "https://ok.example\nnope",
            "allowed_origins",
            "(scheme://host[:port])",
        ),
        ("redirect_url", "javascript:alert(1)", "redirect_url", "absolute http(s) URL"),
        ("spam_threshold", "lots", "spam_threshold", "Must be a number."),
        ("spam_threshold", "-1", "spam_threshold", "more than zero"),
        ("rules", "email", "rules", "A rule is FIELD:KIND"),
        ("rules", "_next:required", "rules", "control fields"),
        ("challenge_provider", "turnstile", "challenge", "Needs a provider and its secret"),
        ("max_files", "0", "uploads", "max_files must be 1 to"),
        ("max_file_size", "ten", "uploads", "max_file_size is a whole number."),
        ("name", "nul\x00", "name", "NUL characters"),
    ],
)
def test_a_refused_value_saves_nothing_and_says_why_beside_it(
    pages: FormSettings, field: str, value: str, setting: str, message: str
) -> None:
    pages.owner()
    before = pages.stored()
    typed = {"name": "Kept <b>input</b>", "allowed_origins": SHOP, field: value}
    if setting == "uploads":
        typed["uploads"] = "on"

    refused = pages.save(**typed)

    assert refused.status_code == 422
    assert pages.stored() == before  # all or nothing
    described = re.search(rf'aria-describedby="[^"]*\b{setting}-error"', refused.text)
    assert described is not None
    error = re.search(rf'<p id="{setting}-error" class="error">([^<]*)</p>', refused.text)
    assert error is not None
    assert message in error.group(1)
    if field != "name":
        assert 'value="Kept &lt;b&gt;input&lt;/b&gt;"' in refused.text  # input kept
    assert "Nothing was saved" in refused.text


def test_several_refusals_are_shown_at_once(pages: FormSettings) -> None:
    pages.owner()

    refused = pages.save(name="", allowed_origins="nope", rules="x:unknown")

    assert refused.status_code == 422
    for setting in ("name", "allowed_origins", "rules"):
        assert f'id="{setting}-error"' in refused.text


def test_pause_refuses_submissions_and_resume_accepts_them(pages: FormSettings) -> None:
    pages.owner()

    paused = pages.post("pause")
    refused = pages.submit()
    page = pages.dash.client.get(paused.headers["location"])
    resumed = pages.post("resume")

    assert paused.status_code == resumed.status_code == 303
    assert paused.headers["location"] == pages.path + "?told=1"
    assert "Form paused: it accepts no submission until it is resumed." in page.text
    resumed_page = pages.dash.client.get(resumed.headers["location"]).text
    assert "Form resumed: it accepts submissions again." in resumed_page
    assert_error(refused, "form_disabled")
    assert "paused" in page.text
    assert f'action="{pages.path}/resume"' in page.text
    assert pages.stored().enabled is True
    assert pages.submit().status_code == 201


def test_rotating_the_key_warns_first_then_shows_the_new_key(pages: FormSettings) -> None:
    pages.owner()
    old = pages.stored().public_form_key

    warning = pages.dash.client.get(pages.path + "/rotate-key")
    assert pages.stored().public_form_key == old  # asking changes nothing
    rotated = pages.post("rotate-key")
    shown = pages.dash.client.get(rotated.headers["location"])

    assert warning.status_code == 200
    assert "stops working at once" in warning.text
    assert old in warning.text
    new = pages.stored().public_form_key
    assert new != old
    assert rotated.status_code == 303
    assert rotated.headers["location"] == pages.path + "?rotated=1"
    assert f'<code class="secret" id="public-key">{new}</code>' in shown.text
    assert f"/f/{new}&#34;" in shown.text  # the snippet carries the new key
    assert old not in shown.text
    assert_error(pages.submit(key=old), "form_not_found")
    assert pages.submit(key=new).status_code == 201


def test_without_csrf_or_from_another_site_nothing_changes(pages: FormSettings) -> None:
    assert pages.dash.client.get(pages.path).status_code == 303  # signed out
    pages.owner()
    before = pages.stored()
    token = pages.dash.csrf("/dashboard/password")

    answers = [
        pages.save_without_csrf(name="No token"),
        pages.post("pause", csrf=False),
        pages.post("rotate-key", csrf=False),
        pages.dash.client.post(
            pages.path,
            data={**UNCHANGED, "csrf": token, "name": "Elsewhere"},
            headers={"origin": "https://evil.example"},
        ),
        pages.dash.client.post(
            pages.path + "/rotate-key",
            data={"csrf": token},
            headers={"origin": "https://evil.example"},
        ),
    ]

    assert [answer.status_code for answer in answers] == [403] * 5
    assert pages.stored() == before


def test_a_hostile_name_saved_is_shown_escaped(pages: FormSettings) -> None:
    pages.owner()
    hostile = '"><img src=x onerror=alert(1)>'

    assert pages.save(name=hostile).status_code == 303
    page = pages.dash.client.get(pages.path)
    inbox = pages.dash.client.get(f"/dashboard/forms/{pages.dash.form.form_id}")

    assert pages.stored().name == hostile
    for text in (page.text, inbox.text):
        assert "<img src=x" not in text
        assert "&lt;img src=x onerror=alert(1)&gt;" in text


def test_the_snippet_posts_to_the_configured_base_url(make_service: ServiceFactory) -> None:
    dash = Dashboard(make_service(Settings(base_url="http://forms.example.org/")))
    pages = FormSettings(dash).owner()

    page = dash.client.get(pages.path)

    key = pages.stored().public_form_key
    assert f"action=&#34;http://forms.example.org/f/{key}&#34;" in page.text


def test_the_snippet_follows_the_forms_mode_and_challenge(pages: FormSettings) -> None:
    pages.owner()
    pages.dash.svc.update_form(
        pages.dash.form.form_id, challenge=Challenge(ChallengeProvider.HCAPTCHA, SECRET)
    )

    hcaptcha = html.unescape(pages.dash.client.get(pages.path).text)
    pages.dash.svc.update_form(pages.dash.form.form_id, mode=FormMode.PROTECTED)
    protected = pages.dash.client.get(pages.path)

    assert "h-captcha-response" in hcaptcha
    assert SECRET not in hcaptcha
    assert "This form is protected" in protected.text
    assert 'id="snippet-text"' not in protected.text


def test_the_snippet_offers_intake_js_pinned_by_its_integrity(pages: FormSettings) -> None:
    pages.owner()
    script = client_asset("js")

    plain = html.unescape(pages.dash.client.get(pages.path).text)
    pages.save(uploads="on", max_files="2")
    with_files = html.unescape(pages.dash.client.get(pages.path).text)

    key = pages.stored().public_form_key
    assert (
        f'<script type="module" src="http://testserver{script.path}"'
        f' integrity="{script.integrity}" crossorigin="anonymous"></script>'
    ) in plain
    assert f'<form method="post" data-intake action="http://testserver/f/{key}"' in plain
    # Under the page's strict CSP a style attribute is ignored: the honeypot is hidden.
    assert 'name="_gotcha" tabindex="-1" autocomplete="off" hidden>' in plain
    # The file limits intake.js checks before sending are the form's own.
    policy = pages.stored().uploads
    assert policy is not None
    assert (
        f'data-intake data-intake-max-file="{policy.max_file_size}"'
        f' data-intake-max-total="{policy.max_total_size}" data-intake-max-files="2"'
    ) in with_files
    served = pages.dash.svc.client.get(script.path)
    assert served.status_code == 200
    # No redirect URL, no _next; with one, the client follows it as _next.
    assert 'name="_next"' not in plain
    pages.save(redirect_url="https://shop.example/thanks?a=1&b=2")
    redirected = pages.dash.client.get(pages.path).text
    assert (
        "&lt;input type=&#34;hidden&#34; name=&#34;_next&#34;"
        " value=&#34;https://shop.example/thanks?a=1&amp;amp;b=2&#34;&gt;"
    ) in redirected
    assert redirected.count("name=&#34;_next&#34;") == 2  # the <pre> and the <textarea>


def test_no_snippet_hides_its_honeypot_with_a_style_attribute(pages: FormSettings) -> None:
    """A site with a strict CSP ignores style attributes: a honeypot hidden by one would
    show, and a person who filled it in would be taken for a bot and stored nowhere."""
    pages.owner()
    page = html.unescape(pages.dash.client.get(pages.path).text)

    honeypots = [line for line in page.splitlines() if 'name="_gotcha"' in line]
    assert honeypots  # the plain form and the intake.js form, each wherever shown
    assert all(line.rstrip().endswith(" hidden>") for line in honeypots)
    assert all("style=" not in line for line in honeypots)
