"""Owners' mail templates: refused when they do not compile or reach outside the sandbox,
submitted values escaped in the HTML part, and a template that fails at send time
replaced by the default rather than losing the mail. Rendered as intake renders them: in
a worker process (ProcessTemplateRenderer), so that a sandbox that let a template run
away would fail these tests, not hang them."""

from __future__ import annotations

import pytest

from intake.adapters.templates.pool import shared_renderer
from intake.domain.form_messages import Templates
from intake.domain.mail_templates import MailTemplateError
from intake.domain.owner_mail import (
    SAMPLE_PAYLOAD,
    check_templates,
    preview,
    render_autoresponse,
    render_notification_mail,
)
from intake.service.admin import AdminError
from intake.service.admin.message_changes import changed_templates, refuse_broken_templates

render = shared_renderer().render

ESCAPES = [
    "{{ ''.__class__ }}",
    "{{ ''.__class__.__mro__[1].__subclasses__() }}",
    "{{ fields['__class__'] }}",
    "{{ fields|attr('__class__') }}",
    "{{ '{0.__class__}'.format(fields) }}",
    "{{ self.__init__.__globals__ }}",
    "{{ cycler.__init__.__globals__.os }}",
    "{% for i in range(10**9) %}{% endfor %}",
    "{{ 'x' * 10**8 }}",
    "{{ 9 ** 99999999 }}",
    "{% for a in range(999) %}{% for b in range(999) %}{% for c in range(999) %}"
    "{% endfor %}{% endfor %}{% endfor %}",
    "{{ fields.message * 100000 }}",
]


@pytest.mark.parametrize("source", ESCAPES)
def test_a_template_reaching_outside_the_sandbox_is_refused(source: str) -> None:
    with pytest.raises(MailTemplateError):
        render(source, {"fields": {"message": "hello"}}, autoescape=True)


@pytest.mark.parametrize("source", ["{% if %}", "{{ fields.", "{% for x in y %}", "{{ }}"])
def test_a_template_that_does_not_compile_is_refused_naming_the_line(source: str) -> None:
    with pytest.raises(MailTemplateError, match="line 1"):
        render(source, {}, autoescape=False)


@pytest.mark.parametrize("source", ESCAPES[:3])
def test_saving_a_refused_template_names_it(source: str) -> None:
    given = {"notification_html": source}
    changed = changed_templates(Templates(), given)
    with pytest.raises(AdminError) as refused:
        refuse_broken_templates(changed, given, "Contact", render)
    assert refused.value.field == "templates.notification_html"
    assert "notification_html" in str(refused.value)


def test_an_unknown_template_is_refused() -> None:
    with pytest.raises(AdminError, match="no template"):
        changed_templates(Templates(), {"footer": "x"})


def test_hostile_submitted_values_are_escaped_in_the_html_part() -> None:
    payload = {
        **SAMPLE_PAYLOAD,
        "data": {"message": '<script>alert(1)</script><img src=x onerror="y">', "name": "&"},
    }
    templates = Templates(
        notification_html="<p>{{ fields.message }}</p><b>{{ fields.name }}</b>",
        notification_text="{{ fields.message }}",
    )
    message, failed = render_notification_mail(
        payload,
        form_name="<i>Contact</i>",
        templates=templates,
        mail_from="forms@example.com",
        to="owner@example.com",
        base_url=None,
        render=render,
    )
    assert failed == ()
    html = message.get_body(("html",))
    text = message.get_body(("plain",))
    assert html is not None
    assert text is not None
    assert "<script>" not in html.get_content()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html.get_content()
    assert "<b>&amp;</b>" in html.get_content()
    # The plain-text part shows the value as it was typed: it is no markup.
    assert "<script>alert(1)</script>" in text.get_content()


def test_a_template_failing_at_send_time_falls_back_to_the_default() -> None:
    # Saved before a rule tightened, say: the mail goes out all the same.
    broken = Templates(notification_subject="{{ ''.__class__ }}", notification_text="{% if %}")
    message, failed = render_notification_mail(
        SAMPLE_PAYLOAD,
        form_name="Contact",
        templates=broken,
        mail_from="forms@example.com",
        to="owner@example.com",
        base_url=None,
        render=render,
    )
    assert failed == ("notification_subject", "notification_text")
    # The default subject: the visitor's `_subject`.
    assert message["Subject"] == "A question"
    text = message.get_body(("plain",))
    assert text is not None
    assert "Ada Lovelace" in text.get_content()


def test_the_defaults_carry_no_product_name() -> None:
    for kind in ("notification", "autoresponse"):
        parts = preview(Templates(), "Contact", kind, render)
        for part in (parts.subject, parts.text, parts.html):
            assert "intake" not in part.lower()


def test_the_default_confirmation_repeats_nothing_the_visitor_sent() -> None:
    payload = {**SAMPLE_PAYLOAD, "data": {"message": "BUY NOW", "email": "ada@example.com"}}
    from email.headerregistry import Address

    message, _ = render_autoresponse(
        payload,
        form_name="Contact",
        templates=Templates(),
        mail_from="forms@example.com",
        to=Address(addr_spec="ada@example.com"),
        render=render,
    )
    assert "BUY NOW" not in message.as_string()
    assert message["Auto-Submitted"] == "auto-replied"


def test_a_subject_template_cannot_add_a_header() -> None:
    payload = {**SAMPLE_PAYLOAD, "data": {"name": "Ada\r\nBcc: all@example.com"}}
    message, _ = render_notification_mail(
        payload,
        form_name="Contact",
        templates=Templates(notification_subject="From {{ fields.name }}"),
        mail_from="forms@example.com",
        to="owner@example.com",
        base_url=None,
        render=render,
    )
    assert message["Bcc"] is None
    assert message["Subject"] == "From Ada Bcc: all@example.com"


def test_check_templates_tells_each_broken_one() -> None:
    refused = check_templates(
        Templates(autoresponse_subject="{{ x.__class__ }}", autoresponse_text="fine"),
        "C",
        render,
    )
    assert list(refused) == ["autoresponse_subject"]
