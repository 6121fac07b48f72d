"""Rows to domain objects and back (intake.adapters.sql_rows), as SQLite holds them.

- Times are ISO 8601 text in UTC with microseconds, fixed width, so that they sort and
  compare as text in SQL and come back exactly.
- Booleans are the integers 0 and 1; JSON is text.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

from intake.adapters.sql_rows import Codec, RowMapper, as_is, aware, json_text


def time_text(moment: datetime) -> str:
    utc = aware(moment).astimezone(UTC).replace(tzinfo=None)
    return utc.isoformat(timespec="microseconds") + "Z"


def parse_time(text: str) -> datetime:
    return datetime.fromisoformat(text.removesuffix("Z")).replace(tzinfo=UTC)


ROW_MAPPER = RowMapper(
    Codec(
        time=time_text,
        read_time=parse_time,
        boolean=int,
        read_boolean=bool,
        json=json_text,
        list_json=json_text,
        read_json=json.loads,
        checked=as_is,
    )
)
