"""The few HTML pages a browser sees: the thank-you page and the error page."""

from __future__ import annotations

from collections.abc import Mapping
from html import escape

_PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>{title}</title>
<style>
body{{font-family:system-ui,sans-serif;max-width:32rem;margin:15vh auto;padding:0 1rem;
color:#1f2328;line-height:1.5}}h1{{font-size:1.5rem}}a{{color:#0969da}}
</style>
</head>
<body>
<h1>{title}</h1>
<p>{message}</p>
{extra}</body>
</html>
"""


def thank_you_page() -> str:
    return _PAGE.format(
        title="Thank you",
        message="Your submission has been received.",
        extra="",
    )


BACK_ADVICE = (
    "Use your browser's back button to return to the form; it usually keeps what you typed."
)
BACK_LINK = "Back to the page you came from"


def error_page(
    status: int,
    message: str,
    *,
    title: str | None = None,
    fields: Mapping[str, str] | None = None,
    advice: str | None = None,
    back: bool = False,
    back_url: str | None = None,
) -> str:
    """The page of a refusal: the public message, then, as the refusal allows, each
    field's message, what to do, and the way back to the form. Everything a sender may
    have chosen (field names) is escaped; `back_url` must be one already checked to be
    on the form's own origins."""
    if title is None:
        title = "Submission failed" if status < 500 else "Please try again"
    parts: list[str] = []
    if fields:
        items = "".join(
            f"<li>{escape(name)}: {escape(text)}</li>\n" for name, text in fields.items()
        )
        parts.append(f"<ul>\n{items}</ul>\n")
    if advice:
        parts.append(f"<p>{escape(advice)}</p>\n")
    if back:
        parts.append(f"<p>{escape(BACK_ADVICE)}</p>\n")
        if back_url:
            parts.append(f'<p><a href="{escape(back_url)}">{escape(BACK_LINK)}</a></p>\n')
    return _PAGE.format(title=escape(title), message=escape(message), extra="".join(parts))
