"""The body of a notification mail, plain text and HTML: the fields, the files and the
footer a notification (notifications.py) has already made safe to show. Every name and
value in the HTML part is escaped here, so none can add markup."""

from __future__ import annotations

import html

from attrs import frozen


@frozen
class ListedFile:
    """An uploaded file as the mail lists it, every part already one safe line."""

    field: str
    name: str
    size: str
    url: str | None
    expires: str | None


def _file_title(item: ListedFile) -> str:
    label = f"{item.field}: {item.name}" if item.field else item.name
    return f"{label} ({item.size})" if item.size else label


def plain_body(
    title: str,
    rows: list[tuple[str, str]],
    files: list[ListedFile],
    footer: list[str],
    link: str | None,
) -> str:
    lines = [f"New submission to {title}", ""]
    if not rows:
        lines.append("(no fields)")
    for name, value in rows:
        # Continuation lines are indented, so a value's own lines cannot pass for
        # another field.
        lines.append(f"{name}: " + "\n  ".join(value.splitlines() or [""]))
    if files:
        lines.extend(["", "Files:"])
    for item in files:
        lines.append(_file_title(item))
        if item.url is not None:
            lines.append(f"  {item.url}")
        if item.expires is not None:
            lines.append(f"  (the link works until {item.expires})")
    if link is not None:
        lines.extend(["", f"Open it in the dashboard: {link}"])
    lines.extend(["", "--", *footer])
    return "\n".join(lines) + "\n"


def _html_files(files: list[ListedFile]) -> str:
    if not files:
        return ""
    items = []
    for item in files:
        title = html.escape(_file_title(item))
        if item.url is not None:
            title = f'<a href="{html.escape(item.url, quote=True)}">{title}</a>'
        if item.expires is not None:
            title += (
                f'<br><span style="color:#666;font-size:small">'
                f"the link works until {html.escape(item.expires)}</span>"
            )
        items.append(f'<li style="padding:4px 0">{title}</li>')
    return f"<h3>Files</h3><ul>{''.join(items)}</ul>"


def html_body(
    title: str,
    rows: list[tuple[str, str]],
    files: list[ListedFile],
    footer: list[str],
    link: str | None,
) -> str:
    cells = "".join(
        "<tr>"
        f'<th style="text-align:left;vertical-align:top;padding:4px 12px 4px 0">'
        f"{html.escape(name)}</th>"
        f'<td style="white-space:pre-wrap;padding:4px 0">{html.escape(value)}</td>'
        "</tr>"
        for name, value in rows
    )
    table = f"<table>{cells}</table>" if rows else "<p>(no fields)</p>"
    notes = "<br>".join(html.escape(line) for line in footer)
    if link is not None:
        link = f'<p><a href="{html.escape(link, quote=True)}">Open it in the dashboard</a></p>'
    return (
        '<!DOCTYPE html><html><head><meta charset="utf-8"></head><body>'
        f"<h2>New submission to {html.escape(title)}</h2>"
        f"{table}"
        f"{_html_files(files)}"
        f"{link or ''}"
        f'<p style="color:#666;font-size:small">{notes}</p>'
        "</body></html>\n"
    )
