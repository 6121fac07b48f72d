"""An upload's type, as its first bytes say: the sender's declared type is only a hint.

puremagic reads the magic numbers; text has none, so a head that is clean UTF-8 text is
`text/plain`, or the declared `text/*` subtype (CSV, Markdown), which text cannot prove or
disprove. Whatever is neither is `application/octet-stream`.
"""

from __future__ import annotations

import puremagic

from intake.domain.uploads import UNKNOWN_TYPE, is_media_type

# How much of a file is read to tell its type: every signature puremagic knows lies
# within it, and it is small enough to hold for each file being received.
SNIFF_BYTES = 8192

_TEXT_CONTROLS = frozenset(b"\t\n\r\f")


def _declared(declared: str | None) -> str | None:
    if not declared:
        return None
    mime = declared.split(";", 1)[0].strip().lower()
    # Taken only when a type name: it may become the stored type, and a header.
    return mime if is_media_type(mime) else None


def _is_text(head: bytes, complete: bool) -> bool:
    if any(byte < 0x20 and byte not in _TEXT_CONTROLS for byte in head) or b"\x7f" in head:
        return False
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as error:
        # A head cut short of the file's end may split a character in two.
        return (
            not complete
            and error.start >= len(head) - 3
            and error.reason.startswith("unexpected end")
        )
    return True


def sniff(head: bytes, declared: str | None, *, complete: bool) -> str:
    """The type of a file that starts with `head` (at most SNIFF_BYTES of it; `complete`
    when that is the whole file). Among equally likely matches the declared type wins,
    so a .xlsx is not called a .docx for sharing its zip layout."""
    if not head:
        return UNKNOWN_TYPE
    wanted = _declared(declared)
    try:
        matches = puremagic.magic_string(head)
    except (puremagic.PureError, ValueError):
        matches = []
    typed = [match for match in matches if match.mime_type]
    if typed:
        best = max(match.confidence for match in typed)
        top = [match.mime_type.lower() for match in typed if match.confidence == best]
        return wanted if wanted is not None and wanted in top else str(top[0])
    if _is_text(head, complete):
        if wanted is not None and wanted.startswith("text/") and wanted != "text/html":
            return wanted
        return "text/plain"
    return UNKNOWN_TYPE
