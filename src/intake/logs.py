"""Log records as one JSON object per line, with the structured fields a record carries.

Callers pass facts (ids, codes, counts, durations) as `extra`; submission contents and
secrets are never passed, so they cannot reach a log.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime

# Every attribute a plain LogRecord has; anything else on a record came from `extra`.
_STANDARD = frozenset(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {
    "message",
    "asctime",
    "taskName",
    "color_message",  # uvicorn's copy of the message with terminal colours
}


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        for name, value in vars(record).items():
            if name not in _STANDARD and not name.startswith("_"):
                entry[name] = value
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str, ensure_ascii=False)


def logging_config(level: int | str) -> dict[str, object]:
    """A `logging.config.dictConfig` that sends every logger, uvicorn's included, through
    one JSON handler on stderr. uvicorn applies it in each worker process it starts, where
    a configuration made only in the parent would not exist."""
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"json": {"()": "intake.logs.JsonFormatter"}},
        "handlers": {
            "stderr": {
                "class": "logging.StreamHandler",
                "formatter": "json",
                "stream": "ext://sys.stderr",
            }
        },
        "root": {"handlers": ["stderr"], "level": level},
        "loggers": {
            name: {"handlers": [], "propagate": True, "level": level}
            for name in ("uvicorn", "uvicorn.error", "uvicorn.access")
        },
    }
