"""How the dashboard shows text it did not write: what visitors typed (field names and
values, subjects, reply addresses, file names), names owners chose, what receivers
answered. Two Jinja filters, the one place this rule lives:

- `isolated`: the value in a direction isolate of its own (`<bdi dir="auto">`), so a
  right-to-left override or an unclosed embedding in it cannot reorder what the page
  shows after it, and right-to-left text still reads the right way;
- `revealed`: the same, and every invisible or control character in the value shown as
  a marker naming it (⟨U+202E⟩, its name in the marker's title), so "Invoice
  \\u202egnp.exe" cannot pass for "Invoice exe.png".

Both escape the value first: the only markup in what they return is their own.
"""

from __future__ import annotations

import re
import unicodedata

from markupsafe import Markup, escape

# Zero-width and invisible formatting characters (soft hyphen, Mongolian vowel
# separator, zero-width space to right-to-left mark, word joiner to invisible plus,
# byte order mark, interlinear annotations, tags), the bidirectional controls (Arabic
# letter mark, embeddings, overrides and isolates), line and paragraph separators, and
# the C0 and C1 controls but tab, line feed and carriage return (a line break).
_INVISIBLE = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e"
    "\u2060-\u2064\u2066-\u2069\ufeff\ufff9-\ufffb\U000e0000-\U000e007f]"
)


def _marker(found: re.Match[str]) -> str:
    char = found.group()
    code = f"U+{ord(char):04X}"
    name = unicodedata.name(char, "")
    if not name:
        name = "CONTROL CHARACTER" if unicodedata.category(char) == "Cc" else "INVISIBLE CHARACTER"
    # dir="ltr": the marker reads the same inside right-to-left text.
    return f'<span class="invisible-char" dir="ltr" title="{code} {name}">⟨{code}⟩</span>'


def _escaped(value: object) -> str:
    # str() first, so that even a Markup value is escaped like any other.
    return str(escape(str(value)))


def _isolate(inner: str) -> Markup:
    return Markup(f'<bdi dir="auto">{inner}</bdi>')  # noqa: S704 - `inner` is escaped


def isolated(value: object) -> Markup:
    """The value, escaped, in a direction isolate of its own."""
    return _isolate(_escaped(value))


def revealed(value: object) -> Markup:
    """The value, escaped, each invisible or control character replaced by a visible
    marker, in a direction isolate of its own. The characters the markers replace are
    left out: none of them can act on the page."""
    return _isolate(_INVISIBLE.sub(_marker, _escaped(value)))


def plain(text: object) -> str:
    """The text as a page shows it to be read or typed: its invisible and control
    characters dropped, each run of white space one space, none at either end."""
    return " ".join(_INVISIBLE.sub("", str(text or "")).split())


def titled(name: object) -> str:
    """A name for a page's `<title>`, which holds text only (no isolate): `plain`, so
    that no character reorders the title around it; "(unnamed)" for an empty one. Jinja
    escapes it as any text."""
    return plain(name) or "(unnamed)"
