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
from datetime import UTC, datetime

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
_STANDARD = frozenset(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {
    "message",
    "asctime",
    "taskName",
    "color_message",  # uvicorn's copy of the message with terminal colours
}


# json.dumps with any option makes an encoder per call; one record a request is enough
# to make that worth keeping one.
_ENCODER = json.JSONEncoder(default=str, ensure_ascii=False)


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
        }
        if _is_own(record.name):
            entry["message"] = record.getMessage()
            for name, value in vars(record).items():
                if name not in _STANDARD and not name.startswith("_"):
                    entry[name] = value
            if record.exc_info:
                entry["exception"] = self.formatException(record.exc_info)
        else:
            # Another library's text may hold a URL, a header or a body: only uvicorn's
            # lifecycle lines keep theirs, and an exception is named by its class alone.
            entry["message"] = (
                record.getMessage() if _is_lifecycle(record) else "(message withheld)"
            )
            if record.exc_info and record.exc_info[0] is not None:
                entry["exception_type"] = record.exc_info[0].__name__
        return _ENCODER.encode(entry)


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
