"""The few HTML pages a browser sees: the thank-you page and the error page."""

from __future__ import annotations

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


def error_page(status: int, message: str) -> str:
    title = "Submission failed" if status < 500 else "Please try again"
    return _PAGE.format(title=escape(title), message=escape(message), extra="")
