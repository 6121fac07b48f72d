"""The HTML to paste into a site for one form: the plain form of docs/snippets, with the
form's own address and what its settings need (multipart for uploads, the Turnstile
widget of turnstile-form.html, the field another provider's widget must add)."""

from __future__ import annotations

from html import escape

from intake.domain.model import ChallengeProvider, Form
from intake.domain.uploads import ANY_TYPE

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


def form_snippet(base_url: str, form: Form) -> str:
    """The form's HTML, each of its values escaped for HTML."""
    action = escape(form_action(base_url, form), quote=True)
    uploads = form.uploads is not None
    provider = form.challenge.provider if form.challenge else None
    lines = [
        "<!--",
        "  A plain HTML form: no script needed. On success the browser lands on the",
        "  form's redirect URL, or on intake's own thank-you page; on a failure it shows",
        "  intake's error page.",
        "-->",
    ]
    if provider is ChallengeProvider.TURNSTILE:
        lines += ["<!-- Cloudflare Turnstile's widget script. -->", _TURNSTILE_SCRIPT]
    multipart = ' enctype="multipart/form-data"' if uploads else ""
    lines += [
        f'<form method="post"{multipart} action="{action}" accept-charset="utf-8">',
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
        "  <!-- The honeypot: hidden from people, filled in by bots. Leave it empty. -->",
        '  <input type="text" name="_gotcha" tabindex="-1" autocomplete="off"'
        ' style="display:none">',
        *_widget(provider),
        '  <button type="submit">Send</button>',
        "</form>",
    ]
    return "\n".join(lines) + "\n"


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
