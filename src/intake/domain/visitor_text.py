"""A visitor's text as a mail may carry it.

Mail to the owner shows what was sent, as it was sent, but never a character that can
reorder or hide text (bidirectional overrides, control characters): a value must read
as what it is (`plain`, as chat messages have it).

A confirmation goes to whatever address a visitor typed, so whatever else they typed
would reach a stranger under the form's name: "Thanks, Account team: your password
expired, reset at https://evil.example/reset". So in an autoresponse a visitor's text
is never in the subject, and in the body each value is cut to MAX_ECHOED_CHARS and
defanged: no mail client makes a link of it (`evil[.]example`, `https[://]`,
`someone[at]example.com`).
"""

from __future__ import annotations

import re

from intake.domain.chat_text import ELLIPSIS, plain

MAX_ECHOED_CHARS = 200

# A dot (or a full stop that IDNA reads as one) between two characters that are not
# space: a host name's separator, which mail clients link; "end. Next" stays as it is.
_HOST_DOT = re.compile(
    r"(?<=[^\s.\u3002\uff0e\uff61])[.\u3002\uff0e\uff61](?=[^\s.\u3002\uff0e\uff61])"
)
_SCHEME = re.compile(r":/+")


def echoed(value: str) -> str:
    """A visitor's value as a confirmation may repeat it: controls and direction marks
    dropped, line breaks as spaces, cut to MAX_ECHOED_CHARS, and made so that no mail
    client links any of it."""
    text = " ".join(plain(value).split())
    if len(text) > MAX_ECHOED_CHARS:
        text = text[: MAX_ECHOED_CHARS - 1].rstrip() + ELLIPSIS
    text = _SCHEME.sub(lambda found: "[" + found.group(0) + "]", text)
    text = _HOST_DOT.sub("[.]", text)
    return text.replace("@", "[at]")
