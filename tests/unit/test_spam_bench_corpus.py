"""`make bench-spam`'s corpus: each mail turned into the submission a contact form would
get (bench/spam/corpus.py), and the minimal mail bogofilter reads of that submission."""

from __future__ import annotations

import email
import json
from email import policy
from pathlib import Path

from bench.spam.bogofilter import rfc822
from bench.spam.corpus import GROUPS, Mail, body_text, fetch, load, mail_of

PLAIN = """\
From: Ada Lovelace <ada@example.com>
Subject: Analytical
 engine
Content-Type: text/plain; charset=utf-8

Hello there.
"""

HTML_ONLY = """\
From: offers@example.com
Subject: =?iso-8859-1?B?SXQnc6BUaW1l?=
Content-Type: text/html; charset=iso-8859-1

<html><body><p>Fish &amp; <b>chips</b></p></body></html>
"""

BOTH = """\
From: not an address
Subject: both
MIME-Version: 1.0
Content-Type: multipart/alternative; boundary="b"

--b
Content-Type: text/plain

plain part
--b
Content-Type: text/html

<p>markup part</p>
--b--
"""


def test_a_plain_mail_gives_subject_message_and_address() -> None:
    mail = mail_of(PLAIN, name="easy-ham-1/1.json", spam=False)
    assert mail == Mail(
        name="easy-ham-1/1.json",
        spam=False,
        subject="Analytical engine",
        message="Hello there.\n",
        email="ada@example.com",
    )
    assert mail.fields == {
        "_subject": "Analytical engine",
        "message": "Hello there.\n",
        "email": "ada@example.com",
    }


def test_html_without_plain_text_loses_its_tags_and_entities() -> None:
    mail = mail_of(HTML_ONLY, name="spam-1/1.json", spam=True)
    assert mail.message.split() == ["Fish", "&", "chips"]
    assert mail.subject == "It's Time"  # the encoded word decoded, spaces made one


def test_plain_parts_win_over_markup_and_a_bad_address_is_left_out() -> None:
    mail = mail_of(BOTH, name="spam-2/1.json", spam=True)
    assert mail.message.strip() == "plain part"
    assert mail.email is None
    assert "email" not in mail.fields


def test_nul_which_no_form_field_holds_is_taken_out() -> None:
    raw = PLAIN.replace("Hello there.", "Hello\x00 there.")
    assert mail_of(raw, name="x", spam=False).message == "Hello there.\n"


def test_body_text_of_a_mail_without_text_is_empty() -> None:
    message = email.message_from_string("Content-Type: image/png\n\nxyz", policy=policy.compat32)
    assert body_text(message) == ""


def test_bogofilter_reads_the_same_subject_address_and_text() -> None:
    mail = Mail("spam-1/1.json", True, "Café offer", "Buy now\nplease", "a@example.com")
    parsed = email.message_from_bytes(rfc822(mail), policy=policy.default)
    assert parsed["Subject"] == "Café offer"
    assert parsed["From"] == "a@example.com"
    assert parsed.get_content() == "Buy now\nplease"
    no_address = Mail("easy-ham-1/1.json", False, "Hi", "text", None)
    assert "From" not in email.message_from_bytes(rfc822(no_address), policy=policy.default)


def _tiny_corpus(cache: Path) -> None:
    for number, group in enumerate(GROUPS):
        folder = cache / "package" / "data" / group
        folder.mkdir(parents=True)
        for index in range(3):
            raw = PLAIN.replace("Hello there.", f"mail {group} {index}")
            (folder / f"{number}{index}.json").write_text(json.dumps({"text": raw}))
        (folder / "ignored.txt").write_text("not a mail")


def test_a_corpus_in_the_cache_is_reused_and_read_in_one_fixed_order(tmp_path: Path) -> None:
    _tiny_corpus(tmp_path)
    assert fetch(tmp_path) == tmp_path / "package" / "data"  # no npm: already there
    first = load(tmp_path)
    assert len(first) == 3 * len(GROUPS)
    assert first == load(tmp_path)
    assert first != load(tmp_path, seed=1)
    assert [m.name for m in first] != sorted(m.name for m in first)
    assert {m.name.split("/")[0] for m in first if m.spam} == {"spam-1", "spam-2"}
    assert all(m.message.startswith(f"mail {m.name.split('/')[0]} ") for m in first)
