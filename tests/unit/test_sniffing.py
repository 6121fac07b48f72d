"""Telling an upload's type from its first bytes: the declared type is a hint at most."""

from __future__ import annotations

import io
import re
import zipfile

import pytest
from hypothesis import given
from hypothesis import strategies as st

from intake.domain.sniffing import SNIFF_BYTES, sniff
from intake.domain.uploads import UNKNOWN_TYPE, UploadPolicy

PDF = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog >>\nendobj\n"
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00"
JPEG = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00\xff\xdb\x00C\x00"
GIF = b"GIF89a\x01\x00\x01\x00\x80\x00\x00\xff\xff\xff\x00\x00\x00!\xf9\x04\x01\x00\x00\x00\x00;"
WEBP = b"RIFF\x24\x00\x00\x00WEBPVP8 \x18\x00\x00\x00\x30\x01\x00\x9d\x01\x2a\x01\x00\x01\x00"
# A Windows program: the "MZ" header and its DOS stub.
EXE = b"MZ\x90\x00\x03\x00\x00\x00\x04\x00\x00\x00\xff\xff\x00\x00\xb8" + b"\x00" * 64
HTML = b"<!DOCTYPE html>\n<html><body><script>alert(document.cookie)</script></body></html>\n"

DOCX_TYPE = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
XLSX_TYPE = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"


def _office(*names: str) -> bytes:
    """An Office Open XML file is a zip of XML parts; which parts tells the kind."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name in ("[Content_Types].xml", "_rels/.rels", *names):
            archive.writestr(name, "<?xml version='1.0'?><x/>")
    return out.getvalue()


DOCX = _office("word/document.xml")
XLSX = _office("xl/workbook.xml")


@pytest.mark.parametrize(
    ("head", "expected"),
    [
        (PDF, "application/pdf"),
        (PNG, "image/png"),
        (JPEG, "image/jpeg"),
        (GIF, "image/gif"),
        (WEBP, "image/webp"),
    ],
)
@pytest.mark.parametrize("declared", [None, "application/octet-stream", "text/plain"])
def test_a_known_format_is_told_by_its_magic_whatever_was_declared(
    head: bytes, expected: str, declared: str | None
) -> None:
    assert sniff(head, declared, complete=True) == expected
    assert sniff(head, declared, complete=False) == expected


def test_a_zip_based_office_file_is_what_it_was_declared_as_among_its_look_alikes() -> None:
    assert sniff(DOCX, DOCX_TYPE, complete=True) == DOCX_TYPE
    assert sniff(XLSX, XLSX_TYPE, complete=True) == XLSX_TYPE
    # The head cannot tell them apart, so the declaration decides between them...
    assert sniff(DOCX, XLSX_TYPE, complete=True) == XLSX_TYPE
    # ...but a declaration outside the look-alikes changes nothing.
    assert sniff(XLSX, "application/pdf", complete=True) == sniff(XLSX, None, complete=True)
    assert sniff(XLSX, "application/pdf", complete=True) != "application/pdf"


def test_a_declared_type_is_compared_without_its_parameters_or_case() -> None:
    assert sniff(XLSX, f"  {XLSX_TYPE.upper()} ; name=book.xlsx", complete=True) == XLSX_TYPE


def test_an_executable_declared_as_a_pdf_is_not_a_pdf() -> None:
    sniffed = sniff(EXE, "application/pdf", complete=True)

    assert sniffed != "application/pdf"
    assert not UploadPolicy().allows(sniffed)


def test_html_declared_as_plain_text_is_html() -> None:
    assert sniff(HTML, "text/plain", complete=True) == "text/html"
    assert not UploadPolicy().allows(sniff(HTML, "text/plain", complete=True))


@pytest.mark.parametrize(
    "text", ["Hello, world.\n", "Grüße aus Köln\r\n\tzweite Zeile\f", "日本語のテキスト", "a"]
)
def test_clean_utf8_text_is_plain_text(text: str) -> None:
    assert sniff(text.encode("utf-8"), None, complete=True) == "text/plain"
    assert sniff(text.encode("utf-8"), "application/octet-stream", complete=True) == "text/plain"


def test_text_declared_as_csv_is_csv_which_text_cannot_disprove() -> None:
    csv = b"name,email\nAda,ada@example.com\n"

    assert sniff(csv, "text/csv", complete=True) == "text/csv"
    assert sniff(csv, "text/csv; charset=utf-8", complete=True) == "text/csv"
    assert sniff(csv, None, complete=True) == "text/plain"
    assert sniff(csv, "application/vnd.ms-excel", complete=True) == "text/plain"


def test_text_declared_as_html_is_only_plain_text() -> None:
    """Text that its magic does not show to be HTML is not made HTML by a declaration."""
    assert sniff(b"just words", "text/html", complete=True) == "text/plain"


def test_a_character_split_at_the_end_of_a_partial_head_is_still_text() -> None:
    text = ("x" * (SNIFF_BYTES - 2) + "€").encode("utf-8")  # € is three bytes
    head = text[:SNIFF_BYTES]

    assert head[-2:] == "€".encode()[:2]
    assert sniff(head, None, complete=False) == "text/plain"
    # The same bytes as a whole file end in the middle of a character: not text.
    assert sniff(head, None, complete=True) == UNKNOWN_TYPE


def test_a_bad_byte_well_before_the_end_of_a_partial_head_is_not_text() -> None:
    head = b"caf\xe9 au lait" + b"x" * 100  # latin-1, not UTF-8

    assert sniff(head, None, complete=False) == UNKNOWN_TYPE


@pytest.mark.parametrize(
    "head",
    [
        bytes(range(256)),
        b"\x00\x01\x02\x03" * 64,
        b"text with a NUL\x00 inside",
        b"text with an escape \x1b[31m",
        b"text with a DEL \x7f",
        b"\xfe\xfe\xff\xff" * 16,
    ],
)
def test_binary_garbage_is_unknown(head: bytes) -> None:
    assert sniff(head, None, complete=True) == UNKNOWN_TYPE
    assert sniff(head, "text/plain", complete=True) == UNKNOWN_TYPE


def test_an_empty_file_is_unknown() -> None:
    assert sniff(b"", "application/pdf", complete=True) == UNKNOWN_TYPE
    assert sniff(b"", None, complete=True) == UNKNOWN_TYPE


@pytest.mark.parametrize(
    "declared",
    [
        "text/\xe9",  # a latin-1 byte in the part's Content-Type header
        "text/a\tb",
        "text/<script>",
        "text/" + "x" * 300,
        "text/",
        "text",
    ],
)
def test_a_declared_text_type_that_is_not_a_mime_type_is_not_taken(declared: str) -> None:
    """The sniffed type goes into the blob store and a download's Content-Type header: a
    declaration that is no type/subtype name must not become one."""
    assert sniff(b"plain words", declared, complete=True) == "text/plain"


_TYPE_NAME = r"[a-z0-9][a-z0-9!#$&^_.+-]{0,126}/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}"


_heads = st.binary(max_size=SNIFF_BYTES) | st.text(max_size=200).map(str.encode)
_declarations = st.none() | st.text(max_size=40) | st.text(max_size=40).map("text/".__add__)


@given(_heads, _declarations, st.booleans())
def test_whatever_the_head_and_declaration_the_answer_is_a_type_name(
    head: bytes, declared: str | None, complete: bool
) -> None:
    assert re.fullmatch(_TYPE_NAME, sniff(head, declared, complete=complete))
