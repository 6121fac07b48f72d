"""The notification mail: escaping, header injection, non-ASCII text and Reply-To."""

from __future__ import annotations

import email
import email.policy
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage

import pytest

from intake.domain.model import OutboxEvent, Submission, SubmissionStatus
from intake.domain.notifications import SUBMISSION_ID_HEADER, render_notification
from intake.domain.signing import DownloadSigner
from intake.domain.uploads import StoredFile

CREATED = datetime(2026, 3, 1, 12, 30, tzinfo=UTC)


def payload(
    data: Mapping[str, object] | None = None,
    *,
    subject: str | None = None,
    reply_to: str | None = None,
) -> dict[str, object]:
    submission = Submission(
        submission_id="sub_01hzx5k7w3e8q2r9t6y4u1i0op",
        form_id="frm_contact",
        workspace_id="ws_acme",
        status=SubmissionStatus.ACCEPTED,
        data=dict(data or {"name": "Ada", "message": "Hello"}),  # type: ignore[arg-type]
        created_at=CREATED,
        subject=subject,
        reply_to=reply_to,
    )
    return dict(OutboxEvent.for_submission("evt_1", submission).payload)


def render(event: Mapping[str, object], *, form_name: str = "Contact") -> EmailMessage:
    return render_notification(
        event,
        form_name=form_name,
        mail_from="Intake <intake@forms.example.org>",
        to="owner@example.com",
        base_url="https://forms.example.org",
    )


def round_trip(message: EmailMessage) -> EmailMessage:
    """The message as a mail server would receive and a client would parse it."""
    parsed = email.message_from_bytes(message.as_bytes(), policy=email.policy.default)
    assert isinstance(parsed, EmailMessage)
    return parsed


def text_of(message: EmailMessage) -> str:
    part = message.get_body(preferencelist=("plain",))
    assert part is not None
    return str(part.get_content())


def html_of(message: EmailMessage) -> str:
    part = message.get_body(preferencelist=("html",))
    assert part is not None
    return str(part.get_content())


# -- headers -----------------------------------------------------------------------


def test_the_subject_is_the_submissions_own() -> None:
    message = round_trip(render(payload(subject="Quote request")))

    assert message["Subject"] == "Quote request"


def test_without_a_subject_the_form_is_named() -> None:
    message = round_trip(render(payload(), form_name="Contact us"))

    assert message["Subject"] == "New submission to Contact us"


def test_a_form_without_a_name_is_named_by_its_id() -> None:
    message = round_trip(render(payload(), form_name=""))

    assert message["Subject"] == "New submission to frm_contact"


def test_the_envelope_headers_are_set() -> None:
    message = round_trip(render(payload()))

    assert message["From"] == "Intake <intake@forms.example.org>"
    assert message["To"] == "owner@example.com"
    assert message[SUBMISSION_ID_HEADER] == "sub_01hzx5k7w3e8q2r9t6y4u1i0op"
    assert message["Auto-Submitted"] == "auto-generated"
    assert message["Date"].datetime == CREATED
    # A long Message-ID is folded onto a second line; unfolded it keeps the space.
    message_id = message["Message-ID"].strip()
    assert message_id.startswith("<sub_01hzx5k7w3e8q2r9t6y4u1i0op.")
    assert message_id.endswith("@forms.example.org>")


def test_the_message_id_is_the_same_on_every_retry_and_differs_per_recipient() -> None:
    event = payload()
    first = render(event)
    again = render(event)
    other = render_notification(
        event,
        form_name="Contact",
        mail_from="intake@forms.example.org",
        to="b@example.com",
        base_url=None,
    )

    assert first["Message-ID"] == again["Message-ID"]
    assert first["Message-ID"] != other["Message-ID"]
    assert "owner" not in first["Message-ID"]


@pytest.mark.parametrize(
    "subject",
    [
        "Hello\r\nBcc: evil@example.com",
        "Hello\nBcc: evil@example.com",
        "Hello\rBcc: evil@example.com",
        "Hello\u2028Bcc: evil@example.com",
        "Hello\r\n\r\n<html>a body of my own</html>",
    ],
)
def test_a_subject_cannot_add_a_header_or_a_body(subject: str) -> None:
    raw = render(payload(subject=subject)).as_bytes()
    message = round_trip(render(payload(subject=subject)))

    assert message["Bcc"] is None
    assert b"\nBcc:" not in raw
    assert len(message.get_all("Subject") or []) == 1
    assert "\r" not in message["Subject"]
    assert "\n" not in message["Subject"]
    assert message["Subject"].startswith("Hello ")
    assert [part.get_content_type() for part in message.iter_parts()] == [
        "text/plain",
        "text/html",
    ]


def test_field_names_and_values_cannot_add_headers() -> None:
    event = payload({"x\r\nBcc: evil@example.com": "y\r\nBcc: evil@example.com"})

    message = round_trip(render(event))

    assert message["Bcc"] is None
    assert "Bcc: evil@example.com" not in str(message.items())


def test_a_long_subject_is_cut() -> None:
    message = round_trip(render(payload(subject="word " * 200)))

    assert len(message["Subject"]) <= 200


# -- Reply-To ------------------------------------------------------------------------


def test_reply_to_is_the_submissions_reply_address() -> None:
    message = round_trip(render(payload(reply_to="ada@example.com")))

    assert message["Reply-To"] == "ada@example.com"


def test_without_a_reply_address_the_email_field_serves() -> None:
    event = payload({"email": "grace@example.com", "name": "Grace"})

    assert round_trip(render(event))["Reply-To"] == "grace@example.com"


def test_a_reply_address_that_is_no_address_falls_back_to_the_email_field() -> None:
    event = payload({"email": "grace@example.com"}, reply_to="not an address")

    assert round_trip(render(event))["Reply-To"] == "grace@example.com"


@pytest.mark.parametrize(
    "reply_to",
    [
        "not an address",
        "ada@example.com\r\nBcc: evil@example.com",
        "ada@example.com, eve@example.com",
        "Ada <ada@example.com>",
        "ada@example.com (comment)",
        "",
        "zoë@exämple.com",  # needs SMTPUTF8, which the mailer does not ask for
    ],
)
def test_without_one_valid_address_there_is_no_reply_to(reply_to: str) -> None:
    event = payload({"email": "also not an address"}, reply_to=reply_to)

    message = round_trip(render(event))

    assert message["Reply-To"] is None
    assert message["Bcc"] is None


def test_a_payload_without_reply_fields_has_no_reply_to() -> None:
    event = payload()
    del event["reply_to"]

    assert round_trip(render(event))["Reply-To"] is None


# -- bodies --------------------------------------------------------------------------


def test_the_text_part_lists_each_field() -> None:
    event = payload(
        {
            "name": "Ada",
            "topics": ["billing", "support"],
            "address": {"city": "London", "zip": "N1"},
            "count": 3,
            "agree": True,
            "empty": None,
            "note": "first line\nsecond line",
        }
    )

    text = text_of(round_trip(render(event)))

    assert "name: Ada\n" in text
    assert "topics: billing, support\n" in text
    assert 'address: {"city": "London", "zip": "N1"}\n' in text
    assert "count: 3\n" in text
    assert "agree: true\n" in text
    assert "empty: \n" in text
    # A value's own lines are indented, so they cannot pass for another field.
    assert "note: first line\n  second line\n" in text
    assert "sub_01hzx5k7w3e8q2r9t6y4u1i0op" in text


def test_every_name_and_value_is_escaped_in_the_html_part() -> None:
    event = payload(
        {
            "<b>name</b>": "<script>alert('x')</script>",
            "list": ["<img src=x onerror=alert(1)>", "&amp;"],
            "nested": {"k": '"><svg onload=alert(1)>'},
        }
    )

    html = html_of(round_trip(render(event)))

    assert "<script>" not in html
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in html
    assert "&lt;b&gt;name&lt;/b&gt;" in html
    assert "<img" not in html
    assert "&lt;img src=x onerror=alert(1)&gt;, &amp;amp;" in html
    assert "<svg" not in html


def test_a_form_name_is_escaped_in_the_html_part() -> None:
    html = html_of(round_trip(render(payload(), form_name="<i>Contact</i>")))

    assert "<i>" not in html
    assert "&lt;i&gt;Contact&lt;/i&gt;" in html


def test_non_ascii_text_round_trips() -> None:
    event = payload(
        {"名前": "山田 太郎", "message": "Grüße aus Köln — ça va? 👋"},
        subject="Anfrage: Größe ändern ✓",
    )

    message = round_trip(render(event, form_name="Kontakt café"))

    assert message["Subject"] == "Anfrage: Größe ändern ✓"
    text = text_of(message)
    assert "名前: 山田 太郎" in text
    assert "message: Grüße aus Köln — ça va? 👋" in text
    html = html_of(message)
    assert "山田 太郎" in html
    assert "Grüße aus Köln — ça va? 👋" in html
    assert "Kontakt café" in html
    # On the wire the headers are 7-bit, as any mail server takes them.
    head = render(event, form_name="Kontakt café").as_bytes().split(b"\n\n", 1)[0]
    assert head.isascii()


def test_a_default_subject_with_a_non_ascii_form_name_round_trips() -> None:
    message = round_trip(render(payload(), form_name="Café «Olé»"))

    assert message["Subject"] == "New submission to Café «Olé»"


def test_a_submission_without_fields_says_so() -> None:
    event = payload()
    event["data"] = {}

    message = round_trip(render(event))

    assert "(no fields)" in text_of(message)
    assert "(no fields)" in html_of(message)


# -- files ------------------------------------------------------------------------------

SIGNER = DownloadSigner(b"k" * 32, "https://forms.example.org", timedelta(days=7))


def with_files(
    *files: tuple[str, str, int], signer: DownloadSigner | None = SIGNER
) -> dict[str, object]:
    submission = Submission(
        submission_id="sub_01hzx5k7w3e8q2r9t6y4u1i0op",
        form_id="frm_contact",
        workspace_id="ws_acme",
        status=SubmissionStatus.ACCEPTED,
        data={"name": "Ada"},
        created_at=CREATED,
        files=tuple(
            StoredFile(
                field=field,
                name=name,
                size=size,
                content_type="application/pdf",
                sha256="ab" * 32,
                key=f"sub_01hzx5k7w3e8q2r9t6y4u1i0op/{index}",
            )
            for index, (field, name, size) in enumerate(files)
        ),
    )
    return dict(OutboxEvent.for_submission("evt_1", submission, signer).payload)


def test_the_files_follow_the_fields_with_name_size_and_link() -> None:
    event = with_files(("cv", "cv.pdf", 123_456), ("photo", "me.png", 1), ("notes", "n.txt", 0))
    links = [SIGNER.link("sub_01hzx5k7w3e8q2r9t6y4u1i0op", i, CREATED) for i in range(3)]

    message = round_trip(render(event))

    text = text_of(message)
    assert text.index("name: Ada") < text.index("Files:") < text.index("--")
    assert f"cv: cv.pdf (123.5 kB)\n  {links[0].url}\n" in text
    assert "  (the link works until 2026-03-08 12:30 UTC)\n" in text
    assert f"photo: me.png (1 byte)\n  {links[1].url}\n" in text
    assert f"notes: n.txt (0 bytes)\n  {links[2].url}\n" in text
    html = html_of(message)
    assert html.index("Ada") < html.index("<h3>Files</h3>")
    assert f'<a href="{links[0].url.replace("&", "&amp;")}">cv: cv.pdf (123.5 kB)</a>' in html
    assert "the link works until 2026-03-08 12:30 UTC" in html


@pytest.mark.parametrize(
    ("size", "shown"),
    [(999, "999 bytes"), (1000, "1.0 kB"), (2_500_000, "2.5 MB"), (1_073_741_824, "1.1 GB")],
)
def test_sizes_are_shown_in_decimal_units(size: int, shown: str) -> None:
    text = text_of(round_trip(render(with_files(("f", "a.bin", size)))))

    assert f"f: a.bin ({shown})\n" in text


def test_a_file_name_can_add_neither_lines_nor_markup() -> None:
    name = '<img src=x onerror=alert(1)>"\r\nBcc: evil@example.com\u2028x.pdf'
    event = with_files(("<b>cv</b>", name, 10))

    message = round_trip(render(event))

    text = text_of(message)
    assert "\nBcc:" not in text
    assert '<b>cv</b>: <img src=x onerror=alert(1)>" Bcc: evil@example.com x.pdf (10 bytes)' in text
    html = html_of(message)
    assert "<img" not in html
    assert "<b>cv" not in html
    assert "&lt;b&gt;cv&lt;/b&gt;: &lt;img src=x onerror=alert(1)&gt;&quot;" in html
    assert round_trip(render(event))["Bcc"] is None


def test_a_link_that_is_not_a_web_address_is_not_made_a_link() -> None:
    event = with_files(("cv", "cv.pdf", 10))
    files = event["files"]
    assert isinstance(files, list)
    files[0] = {**files[0], "url": "javascript:alert(1)"}

    message = round_trip(render(event))

    assert "javascript:" not in text_of(message)
    assert "javascript:" not in html_of(message)
    assert "cv: cv.pdf (10 bytes)" in text_of(message)


def test_files_without_links_are_listed_by_name_and_size() -> None:
    message = round_trip(render(with_files(("cv", "cv.pdf", 10), signer=None)))

    text = text_of(message)
    assert "Files:\ncv: cv.pdf (10 bytes)\n\nOpen it in the dashboard" in text
    assert "/v1/files/" not in text
    assert "/v1/files/" not in html_of(message)


def test_a_submission_without_files_has_no_files_section() -> None:
    message = round_trip(render(payload()))

    assert "Files" not in text_of(message)
    assert "Files" not in html_of(message)
