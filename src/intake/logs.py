"""Log records as one JSON object per line, with the structured fields a record carries.

Callers pass facts (ids, codes, counts, durations) as `extra`; submission contents and
secrets are never passed, so they cannot reach a log.

Other libraries' records are another matter: httpx logs every request's full URL (its
credentials and token included) at INFO, httpcore, botocore, psycopg and uvicorn log
headers, addresses or bodies at DEBUG and below, and any of them may quote a URL in an
error. So `INTAKE_LOG_LEVEL` sets intake's own loggers only; another library's record is
written from WARNING up, and then without its text (`ForeignRecords`). uvicorn's
lifecycle lines (`uvicorn.error` from INFO: started, stopped) are the one exception:
they say where the service listens, nothing a client sent.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from itertools import islice
from json.encoder import encode_basestring
from typing import Any

OWN = "intake"
# uvicorn's lifecycle messages: where it listens, starting, stopping.
SERVER_LIFECYCLE = ("uvicorn", "uvicorn.error")


def _is_own(name: str) -> bool:
    return name == OWN or name.startswith(OWN + ".")


def _is_lifecycle(record: logging.LogRecord) -> bool:
    return record.name in SERVER_LIFECYCLE and record.levelno >= logging.INFO


class ForeignRecords(logging.Filter):
    """Lets through intake's own records, uvicorn's lifecycle lines, and another
    library's records from WARNING up (which JsonFormatter writes without their text).
    On the handler, so it holds whatever level a library's logger was set to."""

    def filter(self, record: logging.LogRecord) -> bool:
        return _is_own(record.name) or _is_lifecycle(record) or record.levelno >= logging.WARNING


# Every attribute a plain LogRecord has; anything else on a record came from `extra`.
_PLAIN = vars(logging.LogRecord("", 0, "", 0, "", None, None))
_STANDARD = frozenset(_PLAIN) | {
    "message",
    "asctime",
    "taskName",
    "color_message",  # uvicorn's copy of the message with terminal colours
}
# A plain record's own attributes come first in it, as its __init__ sets them; `extra`'s
# and anything set later follow. The formatter starts reading after them.
_PLAIN_COUNT = len(_PLAIN)


# json.dumps with any option makes an encoder per call; one record a request is enough
# to make that worth keeping one. It writes what _json_value does not.
_ENCODER = json.JSONEncoder(default=str, ensure_ascii=False)


def _finite(value: float) -> str:
    return float.__repr__(value) if value - value == 0 else _ENCODER.encode(value)


def _null(value: None) -> str:
    return "null"


# The values a record's fields hold (ids, codes, counts, durations), written as
# _ENCODER writes them, without its set-up for each call.
_WRITERS: dict[type, Callable[[Any], str]] = {
    str: encode_basestring,
    int: int.__repr__,
    float: _finite,
    type(None): _null,
}


def _json_value(value: object) -> str:
    return _WRITERS.get(type(value), _ENCODER.encode)(value)


# Names the line gives values of its own.
_WRITTEN_BESIDE = frozenset({"time", "level", "logger", "exception"})


def _extra_names(record: logging.LogRecord) -> list[str]:
    """The names of the fields a record carries beyond the standard ones, in order."""
    fields = vars(record)
    names: Iterable[str] = fields
    if type(record) is logging.LogRecord and len(fields) >= _PLAIN_COUNT:
        names = islice(fields, _PLAIN_COUNT, None)
    return [name for name in names if name not in _STANDARD and name[:1] != "_"]


class JsonFormatter(logging.Formatter):
    """A record as one JSON object: written piece by piece, as json.dumps would write
    the whole (the same text), at half its cost, which one line a request makes count."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._second = -1
        self._second_text = ""

    def _time(self, created: float) -> str:
        """`datetime.isoformat(timespec="milliseconds")` of the record's time (rounded to
        the microsecond first, as `datetime.fromtimestamp` does), the date and time of
        day made once a second."""
        second = int(created)
        micro = round((created - second) * 1_000_000)
        if micro >= 1_000_000:
            second, micro = second + 1, micro - 1_000_000
        if second != self._second:
            self._second_text = datetime.fromtimestamp(second, UTC).strftime("%Y-%m-%dT%H:%M:%S")
            self._second = second
        return f"{self._second_text}.{micro // 1000:03d}+00:00"

    def format(self, record: logging.LogRecord) -> str:
        if not _is_own(record.name):
            return _ENCODER.encode(self._foreign_entry(record))
        parts = [
            '{"time": "' + self._time(record.created) + '"',
            '"level": ' + encode_basestring(record.levelname.lower()),
            '"logger": ' + encode_basestring(record.name),
            '"message": ' + encode_basestring(record.getMessage()),
        ]
        fields = vars(record)
        for name in _extra_names(record):
            if name in _WRITTEN_BESIDE:
                return _ENCODER.encode(self._own_entry(record))
            parts.append(encode_basestring(name) + ": " + _json_value(fields[name]))
        if record.exc_info:
            parts.append('"exception": ' + encode_basestring(self.formatException(record.exc_info)))
        return ", ".join(parts) + "}"

    def _head(self, record: logging.LogRecord) -> dict[str, object]:
        return {
            "time": self._time(record.created),
            "level": record.levelname.lower(),
            "logger": record.name,
        }

    def _own_entry(self, record: logging.LogRecord) -> dict[str, object]:
        """The line as a dict, for a record with a field named as one the line has
        itself: the field's value takes that place (or the exception's text takes its)."""
        entry = self._head(record)
        entry["message"] = record.getMessage()
        fields = vars(record)
        for name in _extra_names(record):
            entry[name] = fields[name]
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return entry

    def _foreign_entry(self, record: logging.LogRecord) -> dict[str, object]:
        # Another library's text may hold a URL, a header or a body: only uvicorn's
        # lifecycle lines keep theirs, and an exception is named by its class alone.
        entry = self._head(record)
        entry["message"] = record.getMessage() if _is_lifecycle(record) else "(message withheld)"
        if record.exc_info and record.exc_info[0] is not None:
            entry["exception_type"] = record.exc_info[0].__name__
        return entry


def logging_config(level: int) -> dict[str, object]:
    """A `logging.config.dictConfig` that sends every logger, uvicorn's included, through
    one JSON handler on stderr: intake's at `level`, uvicorn's lifecycle from INFO, any
    other from WARNING (see ForeignRecords). uvicorn applies it in each worker process it
    starts, where a configuration made only in the parent would not exist."""
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"json": {"()": "intake.logs.JsonFormatter"}},
        "filters": {"foreign": {"()": "intake.logs.ForeignRecords"}},
        "handlers": {
            "stderr": {
                "class": "logging.StreamHandler",
                "formatter": "json",
                "filters": ["foreign"],
                "stream": "ext://sys.stderr",
            }
        },
        # A library's records below WARNING are not even made.
        "root": {"handlers": ["stderr"], "level": logging.WARNING},
        "loggers": {
            OWN: {"handlers": [], "propagate": True, "level": level},
            "uvicorn": {"handlers": [], "propagate": True, "level": max(level, logging.INFO)},
            "uvicorn.error": {"handlers": [], "propagate": True, "level": max(level, logging.INFO)},
            "uvicorn.access": {"handlers": [], "propagate": True, "level": logging.WARNING},
        },
    }


def skip_unwritten_record_fields() -> None:
    """Tells `logging` not to find, for each record, the facts JsonFormatter never
    writes: the caller's file and line (a walk up the stack), the thread and the process
    names. For the server's workers, where every request makes a record."""
    logging._srcfile = None  # the documented switch (logging HOWTO, "Optimization")
    logging.logThreads = False
    logging.logProcesses = False
    logging.logMultiprocessing = False


def log_to_stderr(level: int) -> None:
    """What `logging_config` sets up, for a command that is not the server: one JSON
    handler on stderr. Left alone when logging is set up already (an application that
    embeds intake, a test harness): theirs is the say."""
    root = logging.getLogger()
    if root.handlers:
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter())
    handler.addFilter(ForeignRecords())
    root.addHandler(handler)
    root.setLevel(logging.WARNING)
    logging.getLogger(OWN).setLevel(level)
