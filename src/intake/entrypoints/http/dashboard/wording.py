"""Numbers as people read them on the dashboard's pages (Jinja filters)."""

from __future__ import annotations

from intake.service.admin import COUNT_LIMIT

_UNITS = ("KB", "MB", "GB", "TB")


def file_size(size: object) -> str:
    """A size in bytes as "512 bytes", "1.5 KB", "12 MB" (units of 1,024): one decimal
    below ten, none above. Anything that is not a whole number, as it is."""
    if not isinstance(size, int) or isinstance(size, bool):
        return str(size)
    if size < 1024:
        return "1 byte" if size == 1 else f"{size:,} bytes"
    amount = float(size)
    for unit in _UNITS:
        amount /= 1024
        if amount < 1024 or unit == _UNITS[-1]:
            break
    # Rounded as shown: 1023.96 KB reads "1,024 KB", not a jump to the next unit.
    return f"{amount:.1f} {unit}" if amount < 10 else f"{amount:,.0f} {unit}"


def tab_count(count: int) -> str:
    """A tab's count: "1,234", or "10,000+" past what the inbox counts."""
    return f"{COUNT_LIMIT:,}+" if count > COUNT_LIMIT else f"{count:,}"
