from __future__ import annotations

import asyncio
import json
import logging
import logging.config
import math
from collections.abc import Iterator
from datetime import UTC, datetime
from decimal import Decimal

import pytest
from starlette.testclient import TestClient

from intake.adapters.memory import FakeChallengeVerifier, FakeClock, InMemoryStore, SeededIdSource
from intake.config import Settings
from intake.domain.model import Challenge, ChallengeProvider
from intake.entrypoints.http import create_app
from intake.logs import JsonFormatter, logging_config
from intake.service.admin import owner_services


def _record(**extra: object) -> logging.LogRecord:
    record = logging.LogRecord("intake.access", logging.INFO, "x.py", 1, "request", None, None)
    for name, value in extra.items():
        setattr(record, name, value)
    return record


def test_a_record_is_one_json_line_with_its_structured_fields() -> None:
    line = JsonFormatter().format(_record(request_id="req_1", status=201, duration_ms=1.5))

    entry = json.loads(line)
    assert "\n" not in line
    assert entry["message"] == "request"
    assert entry["level"] == "info"
    assert entry["logger"] == "intake.access"
    assert (entry["request_id"], entry["status"], entry["duration_ms"]) == ("req_1", 201, 1.5)


def test_the_standard_record_attributes_are_not_repeated() -> None:
    entry = json.loads(JsonFormatter().format(_record()))

    assert set(entry) == {"time", "level", "logger", "message"}


def _as_json_dumps_writes(record: logging.LogRecord, fields: dict[str, object]) -> str:
    """The line as a dict of its fields, written by json.dumps: what the formatter's
    own writing stands for."""
    created = datetime.fromtimestamp(record.created, UTC)
    entry: dict[str, object] = {
        "time": created.isoformat(timespec="milliseconds"),
        "level": record.levelname.lower(),
        "logger": record.name,
        "message": record.getMessage(),
    }
    entry.update(fields)
    return json.dumps(entry, default=str, ensure_ascii=False)


class _Named(str):
    pass


@pytest.mark.parametrize(
    "value",
    [None, True, 0, -7, 2**70, 1.5, 0.1 + 0.2, math.nan, -math.inf, "é\u2028\"\\\n\x00",
     _Named("s"), [1, "a", None], {"k": (1, 2.5)}, b"raw", Decimal("1.10")],
)  # fmt: skip
def test_a_field_is_written_as_json_dumps_writes_it(value: object) -> None:
    record = _record(request_id="req_1", value=value, status=201)

    line = JsonFormatter().format(record)

    assert line == _as_json_dumps_writes(
        record, {"request_id": "req_1", "value": value, "status": 201}
    )


@pytest.mark.parametrize("name", ["time", "level", "logger"])
def test_a_field_named_as_the_lines_own_takes_its_place(name: str) -> None:
    record = _record(**{name: "theirs", "status": 201})

    line = JsonFormatter().format(record)

    assert line == _as_json_dumps_writes(record, {name: "theirs", "status": 201})


@pytest.mark.parametrize(
    "created", [1764420000.0, 1764420000.0005, 1764420000.9994999, 1764420000.9999996, 1.25]
)
def test_the_time_is_the_records_to_the_millisecond_as_datetime_writes_it(created: float) -> None:
    formatter = JsonFormatter()
    for moment in (created, created + 0.5, created):  # a second's text made, then kept
        record = _record()
        record.created = moment

        written = json.loads(formatter.format(record))["time"]

        assert written == datetime.fromtimestamp(moment, UTC).isoformat(timespec="milliseconds")


def test_no_log_record_carries_submission_contents_or_secrets(
    caplog: pytest.LogCaptureFixture,
) -> None:
    store, clock, ids = InMemoryStore(), FakeClock(), SeededIdSource()
    services = owner_services(store, clock, ids)

    async def seed() -> tuple[str, str, str]:
        workspace = await services.workspaces.create("Acme")
        form = await services.forms.create(
            workspace.workspace_id, challenge=Challenge(ChallengeProvider.TURNSTILE, SECRET)
        )
        key = await services.keys.create(workspace.workspace_id)
        return form.public_form_key, form.form_id, key.secret

    public_key, form_id, api_key = asyncio.run(seed())
    app = create_app(
        Settings(), store=store, clock=clock, id_source=ids, challenge=FakeChallengeVerifier()
    )
    caplog.set_level(logging.DEBUG)
    with TestClient(app) as client:
        client.post(
            f"/f/{public_key}",
            json={"message": MARKER, "email": "a@example.com"},
            headers={"X-Challenge-Token": TOKEN},
        )
        client.post(
            f"/v1/forms/{form_id}/submissions",
            data={"message": MARKER},
            headers={"Authorization": f"Bearer {api_key}"},
        )
        client.post(f"/f/{public_key}", content=b"{" + MARKER.encode(), headers=JSON)

    formatter = JsonFormatter()
    lines = [formatter.format(record) for record in caplog.records]
    assert any('"logger": "intake.access"' in line for line in lines)
    for secret in (MARKER, SECRET, TOKEN, api_key):
        assert not any(secret in line for line in lines), secret


MARKER = "private-words-7f3a"
SECRET = "challenge-secret-91ce"
TOKEN = "challenge-token-55d0"
JSON = {"Content-Type": "application/json"}


@pytest.fixture
def loggers_restored() -> Iterator[None]:
    """dictConfig sets intake's and uvicorn's loggers for the whole process: they are put
    back after the test, so that no later test in this process logs at its levels."""
    configured = logging_config(logging.INFO)["loggers"]
    assert isinstance(configured, dict)
    names = [*configured, "httpcore.http11"]
    saved = [
        (logger, logger.level, logger.handlers[:], logger.propagate)
        for logger in map(logging.getLogger, names)
    ]
    yield
    for logger, level, handlers, propagate in saved:
        logger.setLevel(level)
        logger.handlers[:] = handlers
        logger.propagate = propagate


@pytest.mark.usefixtures("loggers_restored")
def test_the_serve_logging_config_sends_uvicorn_and_intake_through_one_json_handler(
    capsys: pytest.CaptureFixture[str],
) -> None:
    root = logging.getLogger()
    saved = (root.handlers[:], root.level)
    try:
        logging.config.dictConfig(logging_config(logging.INFO))
        logging.getLogger("uvicorn.error").info("started", extra={"color_message": "x"})
        logging.getLogger("intake.access").info("request", extra={"status": 201})
        logging.getLogger("intake.access").debug("not at info")
    finally:
        root.handlers[:], _ = saved
        root.setLevel(saved[1])
    lines = [json.loads(line) for line in capsys.readouterr().err.splitlines()]
    assert [(e["logger"], e["message"]) for e in lines] == [
        ("uvicorn.error", "started"),
        ("intake.access", "request"),
    ]
    assert "color_message" not in lines[0]
    assert lines[1]["status"] == 201


URL = "https://user:pw@hooks.example.com/in?token=t0ken-3e1a"


@pytest.mark.usefixtures("loggers_restored")
def test_other_libraries_write_nothing_of_their_text_at_any_level(
    capsys: pytest.CaptureFixture[str],
) -> None:
    root = logging.getLogger()
    saved = (root.handlers[:], root.level)
    trace = 5
    try:
        logging.config.dictConfig(logging_config(trace))
        logging.getLogger("httpx").info("HTTP Request: POST %s", URL)
        logging.getLogger("httpcore.http11").setLevel(trace)  # as a library might
        logging.getLogger("httpcore.http11").debug("send_request_headers %s", URL)
        logging.getLogger("uvicorn.asgi").log(trace, "ASGI scope %s", URL)
        logging.getLogger("uvicorn.error").debug("connection from %s", URL)
        logging.getLogger("uvicorn.error").info("Uvicorn running on %s", "http://127.0.0.1:8000")
        try:
            raise ValueError(URL)
        except ValueError:
            logging.getLogger("asyncio").exception("Task exception: %s", URL)
        logging.getLogger("intake.relay").log(trace, "intake's own, at trace")
    finally:
        root.handlers[:], _ = saved
        root.setLevel(saved[1])
    err = capsys.readouterr().err
    lines = [json.loads(line) for line in err.splitlines()]
    assert "t0ken-3e1a" not in err
    assert [(e["logger"], e["message"]) for e in lines] == [
        ("uvicorn.error", "Uvicorn running on http://127.0.0.1:8000"),
        ("asyncio", "(message withheld)"),
        ("intake.relay", "intake's own, at trace"),
    ]
    assert lines[1]["level"] == "error"
    assert lines[1]["exception_type"] == "ValueError"
    assert "exception" not in lines[1]
