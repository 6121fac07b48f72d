"""The HTML to paste into a site for one form: the plain form of docs/snippets, with the
form's own address and what its settings need (multipart for uploads, the Turnstile
widget of turnstile-form.html, the field another provider's widget must add); and the
same form taken over by intake.js (client-form.html), pinned by its integrity hash."""

from __future__ import annotations

from html import escape

from intake.domain.model import ChallengeProvider, Form
from intake.domain.uploads import ANY_TYPE
from intake.entrypoints.http.client_script import client_asset

# The field each provider's widget adds to the form (domain/controls.py takes any).
_TOKEN_FIELDS = {
    ChallengeProvider.TURNSTILE: "cf-turnstile-response",
    ChallengeProvider.HCAPTCHA: "h-captcha-response",
    ChallengeProvider.RECAPTCHA: "g-recaptcha-response",
}
_TURNSTILE_SCRIPT = (
    '<script src="https://challenges.cloudflare.com/turnstile/v0/api.js" async defer></script>'
)


def form_action(base_url: str, form: Form) -> str:
    return f"{base_url.rstrip('/')}/f/{form.public_form_key}"


_PLAIN_INTRO = [
    "<!--",
    "  A plain HTML form: no script needed. On success the browser lands on the",
    "  form's redirect URL, or on intake's own thank-you page; on a failure it shows",
    "  intake's error page.",
    "-->",
]
_CLIENT_INTRO = [
    "<!--",
    "  The same form with intake.js: the page stays put, errors show beside their",
    "  fields, and one click makes one submission. Without JavaScript it posts as the",
    "  plain form does. The stylesheet is optional.",
    "-->",
]


def client_tags(base_url: str) -> list[str]:
    """The module and its stylesheet at their content's addresses, with their SRI."""
    base = base_url.rstrip("/")
    script, style = client_asset("js"), client_asset("css")
    return [
        f'<link rel="stylesheet" href="{escape(base + style.path, quote=True)}"'
        f' integrity="{style.integrity}" crossorigin="anonymous">',
        f'<script type="module" src="{escape(base + script.path, quote=True)}"'
        f' integrity="{script.integrity}" crossorigin="anonymous"></script>',
    ]


def _client_attributes(form: Form) -> str:
    """`data-intake`, and the file limits intake.js checks before sending."""
    if form.uploads is None:
        return " data-intake"
    limits = form.uploads
    return (
        f' data-intake data-intake-max-file="{limits.max_file_size}"'
        f' data-intake-max-total="{limits.max_total_size}"'
        f' data-intake-max-files="{limits.max_files}"'
    )


def form_snippet(base_url: str, form: Form, *, client: bool = False) -> str:
    """The form's HTML, each of its values escaped for HTML; with `client`, taken over
    by intake.js."""
    action = escape(form_action(base_url, form), quote=True)
    uploads = form.uploads is not None
    provider = form.challenge.provider if form.challenge else None
    lines = list(_CLIENT_INTRO if client else _PLAIN_INTRO)
    if client:
        lines += client_tags(base_url)
    if provider is ChallengeProvider.TURNSTILE:
        lines += ["<!-- Cloudflare Turnstile's widget script. -->", _TURNSTILE_SCRIPT]
    multipart = ' enctype="multipart/form-data"' if uploads else ""
    enhanced = _client_attributes(form) if client else ""
    lines += [
        f'<form method="post"{multipart}{enhanced} action="{action}" accept-charset="utf-8">',
        '  <p><label>Name <input name="name" autocomplete="name"></label></p>',
        '  <p><label>Email <input name="email" type="email" autocomplete="email" required>'
        "</label></p>",
        '  <p><label>Message <textarea name="message" rows="5"></textarea></label></p>',
    ]
    if form.uploads is not None:
        types = form.uploads.allowed_types
        # `accept` only guides the file picker: the content decides a file's type.
        accept = "" if ANY_TYPE in types else ",".join(types)
        picker = f' accept="{escape(accept, quote=True)}"' if accept else ""
        lines.append(
            f'  <p><label>File (optional) <input name="file" type="file"{picker}></label></p>'
        )
    lines += [
        '  <!-- Names starting with "_" are instructions to intake, never stored as data. -->',
        '  <input type="hidden" name="_subject" value="New message from the contact form">',
        *_client_next(form, client),
        "  <!-- The honeypot: hidden from people, filled in by bots. Leave it empty. -->",
        # `hidden` rather than a style attribute: a page with a strict
        # Content-Security-Policy ignores style attributes and would show the field, and a
        # person who filled it in would have their submission taken for a bot's.
        '  <input type="text" name="_gotcha" tabindex="-1" autocomplete="off" hidden>',
        *_widget(provider),
        '  <button type="submit">Send</button>',
        "</form>",
    ]
    return "\n".join(lines) + "\n"


def _client_next(form: Form, client: bool) -> list[str]:
    """intake.js is answered in JSON, which carries no redirect: the form's redirect URL
    goes in as `_next`, which it follows after a success."""
    if not client or form.redirect_url is None:
        return []
    url = escape(form.redirect_url, quote=True)
    return [f'  <input type="hidden" name="_next" value="{url}">']


def _widget(provider: ChallengeProvider | None) -> list[str]:
    if provider is None:
        return []
    if provider is ChallengeProvider.TURNSTILE:
        return [
            "  <!-- Replace YOUR_SITE_KEY with your Turnstile site key. -->",
            '  <div class="cf-turnstile" data-sitekey="YOUR_SITE_KEY"></div>',
        ]
    return [
        f"  <!-- Add your {provider.value} widget here, with your site key: it must add",
        f"       the {_TOKEN_FIELDS[provider]} field to this form. -->",
    ]
