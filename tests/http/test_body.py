"""Reading the body over HTTP: content types, malformed bodies, payload limits and
field validation (spec parts 7 and 8, decisions.md "Payload")."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlencode

import pytest

from intake.config import Settings
from intake.domain.model import FieldRule, RuleKind
from tests.http.conftest import (
    Seeded,
    ServiceFactory,
    assert_error,
)

FORM = "application/x-www-form-urlencoded"
JSON = "application/json"
LIMIT = 262_144  # 256 KB, KB meaning 1024 bytes


def _urlencoded(fields: list[tuple[str, str]]) -> bytes:
    return urlencode(fields).encode()


def _multipart(parts: list[tuple[str, str | bytes, str | None]], boundary: str = "XyZ") -> bytes:
    """Parts of (name, value, filename or None)."""
    out = b""
    for name, value, filename in parts:
        disposition = f'form-data; name="{name}"'
        if filename is not None:
            disposition += f'; filename="{filename}"'
        raw = value.encode() if isinstance(value, str) else value
        out += f"--{boundary}\r\nContent-Disposition: {disposition}\r\n\r\n".encode()
        out += raw + b"\r\n"
    return out + f"--{boundary}--\r\n".encode()


def _post(
    seeded: Seeded, content: bytes | Iterator[bytes], content_type: str | None, **kw: Any
) -> Any:
    headers = dict(kw.pop("headers", {}))
    if content_type is not None:
        headers["content-type"] = content_type
    return seeded.svc.public(seeded.form.public_form_key, content=content, headers=headers, **kw)


# -- malformed_request ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "content_type"),
    [
        pytest.param(b'{"name": "Ada"', JSON, id="bad JSON"),
        pytest.param(b'["name", "Ada"]', JSON, id="JSON array at the top"),
        pytest.param(b'"just a string"', JSON, id="JSON string at the top"),
        pytest.param(b'{"name": "Ad\xff\xfea"}', JSON, id="invalid UTF-8 in JSON"),
        pytest.param(b"name=Ad%FF%FEa", FORM, id="invalid UTF-8 in a form"),
        pytest.param(b"name=Ad\xffa", FORM, id="raw invalid UTF-8 in a form"),
        pytest.param(
            b'--XyZ\r\nContent-Disposition: form-data; name="name"\r\n\r\nAda\r\n',
            "multipart/form-data; boundary=XyZ",
            id="multipart without its closing boundary",
        ),
        pytest.param(
            b"--XyZ\r\nX-Nothing: here\r\n\r\nAda\r\n--XyZ--\r\n",
            "multipart/form-data; boundary=XyZ",
            id="multipart part without a name",
        ),
        pytest.param(b"name=Ada", "multipart/form-data", id="multipart without a boundary"),
    ],
)
def test_a_body_that_cannot_be_read_as_its_declared_type_is_malformed(
    seeded: Seeded, content: bytes, content_type: str
) -> None:
    response = _post(seeded, content, content_type)

    assert_error(response, "malformed_request")
    assert seeded.svc.stored() == (0, 0)


@pytest.mark.parametrize(
    "key",
    [
        pytest.param("k" * 256, id="256 characters"),
        pytest.param("", id="empty"),
        pytest.param("tab\there", id="a control character"),
    ],
)
def test_an_idempotency_key_that_is_not_1_to_255_printable_ascii_is_malformed(
    seeded: Seeded, key: str
) -> None:
    response = _post(seeded, b"name=Ada", FORM, idempotency_key=key)

    assert_error(response, "malformed_request")
    assert seeded.svc.stored() == (0, 0)


def test_a_non_ascii_idempotency_key_is_malformed(seeded: Seeded) -> None:
    response = seeded.svc.client.post(
        f"/f/{seeded.form.public_form_key}",
        content=b"name=Ada",
        headers=[(b"content-type", FORM.encode()), (b"idempotency-key", "clé-1".encode())],
    )

    assert_error(response, "malformed_request")
    assert seeded.svc.stored() == (0, 0)


def test_an_idempotency_key_of_255_printable_characters_is_accepted(seeded: Seeded) -> None:
    response = _post(seeded, b"name=Ada", FORM, idempotency_key="~" * 255)

    assert response.status_code == 201


# -- unsupported_content_type -----------------------------------------------------------


@pytest.mark.parametrize(
    "content_type",
    [
        pytest.param("text/plain", id="text/plain"),
        pytest.param("application/xml", id="application/xml"),
        pytest.param("application/jsonp", id="a near miss"),
        pytest.param(None, id="no Content-Type"),
    ],
)
def test_a_content_type_other_than_the_three_is_unsupported(
    seeded: Seeded, content_type: str | None
) -> None:
    response = _post(seeded, b'{"name": "Ada"}', content_type)

    assert_error(response, "unsupported_content_type")
    assert seeded.svc.stored() == (0, 0)


@pytest.mark.parametrize(
    ("content", "content_type"),
    [
        (b'{"name": "Ada"}', "application/json; charset=utf-8"),
        (b'{"name": "Ada"}', "Application/JSON"),
        (b"name=Ada", "application/x-www-form-urlencoded; charset=UTF-8"),
        (_multipart([("name", "Ada", None)], "b0und"), "multipart/form-data; boundary=b0und"),
    ],
)
def test_content_type_parameters_and_case_are_accepted(
    seeded: Seeded, content: bytes, content_type: str
) -> None:
    response = _post(seeded, content, content_type)

    assert response.status_code == 201, response.text
    stored = seeded.svc.submission(response.json()["submission_id"])
    assert stored.data == {"name": "Ada"}


# -- payload_too_large ------------------------------------------------------------------


def test_a_declared_length_over_the_limit_is_refused_before_any_byte_is_read(
    seeded: Seeded,
) -> None:
    endless = iter(lambda: b"a=" + b"b" * 8190, None)

    exchange = seeded.svc.raw(
        f"/f/{seeded.form.public_form_key}",
        [("content-type", FORM), ("content-length", str(LIMIT + 1))],
        endless,
    )

    assert exchange.status == 413
    assert exchange.json()["error"]["code"] == "payload_too_large"
    assert exchange.pulled == 0
    assert seeded.svc.stored() == (0, 0)


def _body_of_exactly(size: int) -> bytes:
    """A valid form body of `size` wire bytes whose text stays within the text limits:
    percent-encoding makes the wire three times the text."""
    body = b""
    index = 0
    while size - len(body) > 18_100:
        body += _urlencoded([(f"f{index}", "é" * 3000)]) + b"&"
        index += 1
    head = f"f{index}=".encode()
    return body + head + b"a" * (size - len(body) - len(head))


def test_a_body_of_exactly_the_limit_is_read_and_accepted(seeded: Seeded) -> None:
    body = _body_of_exactly(LIMIT)

    exchange = seeded.svc.raw(
        f"/f/{seeded.form.public_form_key}",
        [("content-type", FORM), ("content-length", str(len(body)))],
        iter([body[:100_000], body[100_000:]]),
    )

    assert len(body) == LIMIT
    assert exchange.status == 201, exchange.body
    assert exchange.pulled == LIMIT
    assert seeded.svc.stored() == (1, 1)


def test_a_body_one_byte_over_the_limit_is_too_large(seeded: Seeded) -> None:
    response = _post(seeded, _body_of_exactly(LIMIT + 1), FORM)

    assert_error(response, "payload_too_large")
    assert seeded.svc.stored() == (0, 0)


def test_a_chunked_body_over_the_limit_is_cut_off_not_read_whole(seeded: Seeded) -> None:
    chunk = 16 * 1024
    endless = iter(lambda: b"b" * chunk, None)

    exchange = seeded.svc.raw(
        f"/f/{seeded.form.public_form_key}", [("content-type", FORM)], endless
    )

    assert exchange.status == 413
    assert exchange.json()["error"]["code"] == "payload_too_large"
    assert LIMIT < exchange.pulled <= LIMIT + chunk
    assert seeded.svc.stored() == (0, 0)


def test_a_chunked_body_over_the_limit_sent_as_a_generator_is_refused(seeded: Seeded) -> None:
    def body() -> Iterator[bytes]:
        yield b"message="
        for _ in range(20):
            yield b"x" * 16_384

    response = _post(seeded, body(), FORM)

    assert_error(response, "payload_too_large")
    assert "content-length" not in response.request.headers
    assert seeded.svc.stored() == (0, 0)


def test_a_sender_too_slow_to_finish_its_body_is_refused(make_service: ServiceFactory) -> None:
    seeded = Seeded(make_service(Settings(body_timeout=0.05)))

    exchange = seeded.svc.raw(
        f"/f/{seeded.form.public_form_key}",
        [("content-type", FORM), ("content-length", "1000")],
        iter([b"name=Ada&message="]),
        stall=True,
    )

    assert exchange.status == 400
    assert exchange.json()["error"]["code"] == "malformed_request"
    assert seeded.svc.stored() == (0, 0)


def _json_fields(count: int) -> bytes:
    return json.dumps({f"f{i}": "v" for i in range(count)}).encode()


@pytest.mark.parametrize(
    ("content", "content_type"),
    [
        pytest.param(_urlencoded([(f"f{i}", "v") for i in range(101)]), FORM, id="101 fields"),
        pytest.param(_json_fields(101), JSON, id="101 JSON fields"),
        pytest.param(
            _urlencoded([(f"f{i}", "v") for i in range(100)] + [("_subject", "Hi")]),
            FORM,
            id="100 fields and a control field",
        ),
        pytest.param(
            _urlencoded([("tags", str(i)) for i in range(101)]), FORM, id="101 repeated names"
        ),
        pytest.param(_urlencoded([("n" * 129, "v")]), FORM, id="129-byte name"),
        pytest.param(_urlencoded([("é" * 65, "v")]), FORM, id="130-byte name of 65 characters"),
        pytest.param(_urlencoded([("message", "v" * 20_481)]), FORM, id="20481-byte value"),
        pytest.param(
            _urlencoded([("message", "é" * 10_241)]), FORM, id="20482-byte value of 10241 chars"
        ),
        pytest.param(
            json.dumps({"message": "v" * 20_481}).encode(), JSON, id="20481-byte JSON value"
        ),
        pytest.param(
            _urlencoded([(f"f{i}", "v" * 20_480) for i in range(11)]),
            FORM,
            id="total text over 204800",
        ),
        pytest.param(json.dumps({"a": {"b": {"c": {"d": "x"}}}}).encode(), JSON, id="JSON depth 4"),
        pytest.param(
            json.dumps({"a": [{"b": {"c": {"d": "x"}}}]}).encode(), JSON, id="depth 4 via a list"
        ),
        pytest.param(b'{"a":' * 5000 + b"1" + b"}" * 5000, JSON, id="JSON nested 5000 deep"),
        pytest.param(
            _multipart([("message", "v" * 20_481, None)]),
            "multipart/form-data; boundary=XyZ",
            id="20481-byte multipart value",
        ),
        pytest.param(
            _multipart([(f"f{i}", "v", None) for i in range(101)]),
            "multipart/form-data; boundary=XyZ",
            id="101 multipart fields",
        ),
    ],
)
def test_a_body_over_a_payload_limit_is_too_large(
    seeded: Seeded, content: bytes, content_type: str
) -> None:
    response = _post(seeded, content, content_type)

    assert_error(response, "payload_too_large")
    assert seeded.svc.stored() == (0, 0)


@pytest.mark.parametrize(
    ("content", "content_type"),
    [
        pytest.param(_urlencoded([(f"f{i}", "v") for i in range(100)]), FORM, id="100 fields"),
        pytest.param(_json_fields(100), JSON, id="100 JSON fields"),
        pytest.param(_urlencoded([("n" * 128, "v")]), FORM, id="128-byte name"),
        pytest.param(_urlencoded([("é" * 64, "v")]), FORM, id="128-byte name of 64 characters"),
        pytest.param(_urlencoded([("message", "v" * 20_480)]), FORM, id="20480-byte value"),
        pytest.param(
            _urlencoded([("message", "é" * 10_240)]), FORM, id="20480-byte value of 10240 chars"
        ),
        pytest.param(
            _urlencoded([(f"f{i}", "v" * 20_480) for i in range(10)]),
            FORM,
            id="total text of exactly 204800",
        ),
        pytest.param(json.dumps({"a": {"b": {"c": "x"}}}).encode(), JSON, id="JSON depth 3"),
        pytest.param(
            _multipart([("message", "v" * 20_480, None)]),
            "multipart/form-data; boundary=XyZ",
            id="20480-byte multipart value",
        ),
    ],
)
def test_a_body_exactly_at_the_payload_limits_is_accepted(
    seeded: Seeded, content: bytes, content_type: str
) -> None:
    response = _post(seeded, content, content_type)

    assert response.status_code == 201, response.text
    assert seeded.svc.stored() == (1, 1)


def test_a_nested_json_object_within_the_depth_limit_is_kept_as_it_is(seeded: Seeded) -> None:
    payload = {"name": "Ada", "address": {"city": "London", "lines": ["1 Main St", "Flat 2"]}}

    response = seeded.svc.public(seeded.form.public_form_key, json=payload)

    assert response.status_code == 201
    assert seeded.svc.submission(response.json()["submission_id"]).data == payload


# -- validation_failed ------------------------------------------------------------------


def _rules(seeded: Seeded, *rules: FieldRule) -> None:
    seeded.svc.update_form(seeded.form.form_id, rules=list(rules))


@pytest.mark.parametrize(
    ("rule", "fields", "message"),
    [
        (FieldRule("name", RuleKind.REQUIRED), {"other": "x"}, "This field is required."),
        (FieldRule("name", RuleKind.REQUIRED), {"name": "   "}, "This field is required."),
        (
            FieldRule("contact", RuleKind.EMAIL),
            {"contact": "not-an-address"},
            "Please enter a valid email address.",
        ),
        (
            FieldRule("site", RuleKind.URL),
            {"site": "javascript:alert(1)"},
            "Please enter a valid URL.",
        ),
        (FieldRule("age", RuleKind.NUMBER), {"age": "forty"}, "Please enter a number."),
        (
            FieldRule("bio", RuleKind.MAX_LENGTH, limit=5),
            {"bio": "toolong"},
            "Please use at most 5 characters.",
        ),
    ],
)
def test_a_field_that_breaks_a_rule_is_named_with_its_message(
    seeded: Seeded, rule: FieldRule, fields: dict[str, str], message: str
) -> None:
    _rules(seeded, rule)

    response = seeded.svc.public(seeded.form.public_form_key, data=fields)

    body = assert_error(response, "validation_failed")
    assert body["error"]["fields"] == {rule.field: message}
    assert seeded.svc.stored() == (0, 0)


def test_fields_that_keep_their_rules_are_accepted(seeded: Seeded) -> None:
    _rules(
        seeded,
        FieldRule("name", RuleKind.REQUIRED),
        FieldRule("contact", RuleKind.EMAIL),
        FieldRule("site", RuleKind.URL),
        FieldRule("age", RuleKind.NUMBER),
        FieldRule("bio", RuleKind.MAX_LENGTH, limit=5),
    )
    fields = {
        "name": "Ada",
        "contact": "ada@example.com",
        "site": "https://example.com",
        "age": "36",
        "bio": "short",
    }

    response = seeded.svc.public(seeded.form.public_form_key, data=fields)

    assert response.status_code == 201, response.text


def test_every_invalid_field_is_reported_at_once(seeded: Seeded) -> None:
    _rules(seeded, FieldRule("name", RuleKind.REQUIRED), FieldRule("age", RuleKind.NUMBER))

    response = seeded.svc.public(seeded.form.public_form_key, data={"age": "x", "email": "nope"})

    body = assert_error(response, "validation_failed")
    assert set(body["error"]["fields"]) == {"name", "age", "email"}


def test_a_field_named_email_must_hold_an_address_without_any_rule(seeded: Seeded) -> None:
    response = seeded.svc.public(seeded.form.public_form_key, data={"email": "ada at example"})

    body = assert_error(response, "validation_failed")
    assert body["error"]["fields"] == {"email": "Please enter a valid email address."}


def test_an_invalid_replyto_is_a_validation_failure(seeded: Seeded) -> None:
    response = seeded.svc.public(
        seeded.form.public_form_key, data={"name": "Ada", "_replyto": "nobody"}
    )

    body = assert_error(response, "validation_failed")
    assert body["error"]["fields"] == {"_replyto": "Please enter a valid email address."}


def test_a_multipart_file_part_is_refused_on_its_field(seeded: Seeded) -> None:
    body = _multipart([("name", "Ada", None), ("cv", b"%PDF-1.4 ...", "cv.pdf")])

    response = _post(seeded, body, "multipart/form-data; boundary=XyZ")

    error = assert_error(response, "validation_failed")
    assert error["error"]["fields"] == {"cv": "File uploads are not accepted."}
    assert seeded.svc.stored() == (0, 0)


def test_a_file_part_sent_by_httpx_files_is_refused_too(seeded: Seeded) -> None:
    response = seeded.svc.public(
        seeded.form.public_form_key,
        data={"name": "Ada"},
        files={"attachment": ("notes.txt", b"hello", "text/plain")},
    )

    error = assert_error(response, "validation_failed")
    assert error["error"]["fields"] == {"attachment": "File uploads are not accepted."}
