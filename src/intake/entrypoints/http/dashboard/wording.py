"""Numbers as people read them on the dashboard's pages (Jinja filters)."""

from __future__ import annotations

import re
from decimal import Decimal

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


_SIZE_UNITS = {"": 1, "b": 1, "byte": 1, "bytes": 1, "kb": 1024, "mb": 1024**2, "gb": 1024**3}
_SIZE = re.compile(r"\s*(\d{1,15}(?:\.\d{1,6})?)\s*([a-z]*)\s*", re.IGNORECASE)


def size_field(size: int) -> str:
    """A size as a settings box shows it, exactly: "10 MB", "512 KB", or bytes ("1500")
    when no larger unit holds it whole."""
    for unit in ("GB", "MB", "KB"):
        factor = _SIZE_UNITS[unit.lower()]
        if size >= factor and size % factor == 0:
            return f"{size // factor} {unit}"
    return str(size)


def typed_size(text: str) -> int | str:
    """A size as typed in a settings box ("10 MB", "1.5 mb", "512KB", "2000"), in bytes;
    the text as typed when it is none, for the settings' reader to refuse as any other
    value that is not a whole number."""
    found = _SIZE.fullmatch(text)
    if found is None or found.group(2).lower() not in _SIZE_UNITS:
        return text
    amount = Decimal(found.group(1)) * _SIZE_UNITS[found.group(2).lower()]
    return int(amount) if amount == amount.to_integral_value() else text
