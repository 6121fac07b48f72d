"""Hypothesis over HTTP: hostile bodies, headers, paths and methods against the real app.

The app runs in process behind Starlette's TestClient, on the in-memory fakes, with every
kind of form a request can meet (plain, protected, on an allow-list, behind a challenge,
with rules, paused). Whatever is sent, the answer

- has a status the specification (or decisions.md, for 204, 303 and 405) lists, and never
  a 5xx other than 503 service_unavailable with Retry-After (nor, here, any fault of
  ours: nothing is logged at error level);
- is the spec's JSON envelope exactly, or, when Accept prefers text/html, the HTML error
  page with the public message escaped and nothing of the request reflected;
- carries an X-Request-ID, the CORS echo on the public endpoint, and matches what
  /openapi.json documents for it;
- leaves no submission contents or secrets in the logs.
"""

from __future__ import annotations

import html
import itertools
import json
import logging
import re
from collections.abc import Iterator
from functools import partial
from ipaddress import ip_network
from typing import Any
from urllib.parse import quote, unquote

import httpx2
import pytest
from attrs import frozen
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient
from starlette.types import ASGIApp, Message, Scope

from intake.adapters.memory import FakeChallengeVerifier, FakeClock, InMemoryStore, SeededIdSource
from intake.adapters.ratelimit_memory import InProcessRateLimiter
from intake.config import Settings
from intake.domain.model import Challenge, ChallengeProvider, FieldRule, FormMode, Plan, RuleKind
from intake.domain.origins import normalize_origin
from intake.domain.ratelimit import RateLimits, RateRule
from intake.entrypoints.http import create_app
from intake.logs import JsonFormatter
from intake.ports.challenge import ChallengeVerdict
from intake.service.admin import FormChanges, owner_services
from intake.service.messages import CONFIRMATION
from tests.http.conftest import MANAGEMENT_ERRORS, SPEC_ERRORS
from tests.http.spec_check import SpecCheck
from tests.property.strategies import (
    BOUNDARY,
    CHARSETS,
    JSON_TYPE,
    MULTIPART_TYPE,
    URLENCODED_TYPE,
    Wire,
    WireBody,
    any_text_headers,
    charsets,
    content_types,
    encode_json,
    encode_multipart,
    encode_urlencoded,
    hostile_bodies,
    idempotency_keys,
    invalid_idempotency_keys,
    limit_cases,
    origins,
)

PEER = "203.0.113.5"  # the test client's address, and a trusted proxy
# Sent in bodies and in secret headers: it must never reach a log line or an HTML page.
MARKER = "Zq7hostileMARKER"
LISTED_ORIGIN = "https://shop.example"  # the allow-listed form's one origin
PASSING_TOKEN = "token-that-passes"
FLAKY_TOKEN = "token-the-provider-cannot-judge"
REQUEST_ID = re.compile(r"^req_[0-9a-f]{20}$")

SUCCESS_STATUSES = {200, 201, 303}
# 204: the CORS preflight; 405: a wrong method on a known path (decisions: the envelope).
OTHER_STATUSES = {204, 405}
ERROR_STATUSES = {status for status, _ in SPEC_ERRORS.values()}
ALLOWED_STATUSES = SUCCESS_STATUSES | OTHER_STATUSES | ERROR_STATUSES
UNREACHED = RateRule(1_000_000, 30)

BROWSER_ACCEPTS = (
    "text/html",
    "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
    "application/json;q=0.5, text/html",
)
JSON_ACCEPTS = (
    "application/json",
    "*/*",
    "application/json, text/html;q=0.9",
    "text/html;q=0",
    "",
)


@frozen
class World:
    client: TestClient
    spec: SpecCheck
    records: list[logging.LogRecord]
    public_keys: tuple[str, ...]  # plain, protected, allow-listed, guarded, with rules, paused
    server_form_ids: tuple[str, ...]  # plain, protected, paused
    plain_key: str
    plain_form_id: str
    listed_key: str
    api_key: str


class _Collect(logging.Handler):
    def __init__(self, records: list[logging.LogRecord]) -> None:
        super().__init__(logging.DEBUG)
        self.records = records

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture(scope="module")
def world() -> Iterator[World]:
    settings_ = Settings(
        rate_limits=RateLimits(
            public_burst=UNREACHED,
            public_sustained=UNREACHED,
            public_form=UNREACHED,
            server_burst=UNREACHED,
            server_sustained=UNREACHED,
        ),
        trusted_proxies=(ip_network("203.0.113.0/24"),),
    )
    store = InMemoryStore()
    clock = FakeClock()
    ids = SeededIdSource()
    challenge = FakeChallengeVerifier(
        {PASSING_TOKEN: ChallengeVerdict.PASSED, FLAKY_TOKEN: ChallengeVerdict.UNAVAILABLE}
    )
    app = create_app(
        settings_,
        store=store,
        clock=clock,
        id_source=ids,
        challenge=challenge,
        rate_limiter=InProcessRateLimiter(),
    )
    records: list[logging.LogRecord] = []
    handler = _Collect(records)
    logger = logging.getLogger("intake")
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        with TestClient(app, client=(PEER, 1234), follow_redirects=False) as client:
            portal = client.portal
            assert portal is not None
            services = owner_services(store, clock, ids)

            def call(fn: Any, *args: Any, **kwargs: Any) -> Any:
                return portal.call(partial(fn, *args, **kwargs))

            ws = call(services.workspaces.create, "Hostile", plan=Plan.BUSINESS).workspace_id
            plain = call(services.forms.create, ws, name="Contact")
            protected = call(services.forms.create, ws, mode=FormMode.PROTECTED)
            listed = call(services.forms.create, ws, allowed_origins=[LISTED_ORIGIN])
            guarded = call(
                services.forms.create, ws, challenge=Challenge(ChallengeProvider.TURNSTILE, "s")
            )
            ruled = call(
                services.forms.create,
                ws,
                rules=[
                    FieldRule("name", RuleKind.REQUIRED),
                    FieldRule("website", RuleKind.URL),
                    FieldRule("age", RuleKind.NUMBER),
                    FieldRule("message", RuleKind.MAX_LENGTH, 10),
                ],
            )
            paused = call(services.forms.create, ws)
            call(services.forms.update, paused.form_id, FormChanges(enabled=False))
            key = call(services.keys.create, ws)
            spec = SpecCheck.of(client.get("/openapi.json"))
            forms = (plain, protected, listed, guarded, ruled, paused)
            yield World(
                client=client,
                spec=spec,
                records=records,
                public_keys=tuple(form.public_form_key for form in forms),
                server_form_ids=(plain.form_id, protected.form_id, paused.form_id),
                plain_key=plain.public_form_key,
                plain_form_id=plain.form_id,
                listed_key=listed.public_form_key,
                api_key=key.secret,
            )
            call(store.close)
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


# -- bodies ------------------------------------------------------------------------------

Body = tuple[str | None, bytes]


@st.composite
def _valid(draw: st.DrawFn) -> Body:
    """A body that passes, with the marker in its values: the deep steps and the commit."""
    fields = [("name", f"Ada {MARKER}"), ("message", MARKER[:10])]
    if draw(st.booleans()):
        fields.append(("cf-turnstile-response", draw(st.sampled_from([PASSING_TOKEN, "x"]))))
    if draw(st.booleans()):
        fields.append(("_gotcha", draw(st.sampled_from(["", "bot"]))))
    wire = draw(st.sampled_from(Wire))
    if wire is Wire.JSON:
        return JSON_TYPE, encode_json(dict(fields))
    if wire is Wire.MULTIPART:
        return MULTIPART_TYPE, encode_multipart(fields)
    return URLENCODED_TYPE, encode_urlencoded(fields)


def _at_the_limits() -> st.SearchStrategy[Body]:
    def as_body(body: object) -> Body:
        assert isinstance(body, WireBody)
        return body.content_type, body.data

    return (
        limit_cases().filter(lambda case: case.wire is not Wire.FIELDS).map(lambda c: c.body())
    ).map(as_body)


@st.composite
def _deep_json(draw: st.DrawFn) -> Body:
    depth = draw(st.sampled_from([3, 4, 5, 64, 1_000, 100_000]))
    opener, closer = draw(st.sampled_from([("[", "]"), ('{"a":', "}")]))
    inner = opener * depth + "1" + closer * depth
    return JSON_TYPE, ('{"deep":' + inner + "}").encode()


@st.composite
def _many_fields(draw: st.DrawFn) -> Body:
    count = draw(st.sampled_from([99, 100, 101, 1_000, 10_000]))
    value = "v" * draw(st.sampled_from([0, 1, 20_480, 20_481, 300_000]))
    if count * len(value) > 400_000:
        count = max(1, 400_000 // max(1, len(value)))
    fields = [(f"f{i}", value) for i in range(count)]
    wire = draw(st.sampled_from([Wire.URLENCODED, Wire.JSON, Wire.MULTIPART]))
    if wire is Wire.JSON:
        return JSON_TYPE, encode_json(dict(fields))
    if wire is Wire.MULTIPART:
        return MULTIPART_TYPE, encode_multipart(fields)
    return URLENCODED_TYPE, encode_urlencoded(fields)


@st.composite
def _nul_and_bad_bytes(draw: st.DrawFn) -> Body:
    junk = draw(st.sampled_from([b"\x00", b"\xff\xfe", b"\xc3\x28", b"\xed\xa0\x80", b"%00"]))
    where = draw(st.sampled_from(["name", "value"]))
    name, value = (b"n" + junk, b"v") if where == "name" else (b"n", b"v" + junk)
    kind = draw(st.sampled_from(["urlencoded", "json", "multipart", "json-escape"]))
    if kind == "urlencoded":
        return URLENCODED_TYPE, name + b"=" + value
    if kind == "json":
        return JSON_TYPE, b'{"' + name + b'": "' + value + b'"}'
    if kind == "json-escape":
        escape = draw(st.sampled_from(["\\u0000", "\\ud800", "\\udfff"]))
        target = f'"n{escape}": "v"' if where == "name" else f'"n": "v{escape}"'
        return JSON_TYPE, ("{" + target + "}").encode()
    dash = f"--{BOUNDARY}".encode()
    body = (
        dash
        + b'\r\nContent-Disposition: form-data; name="'
        + name
        + b'"\r\n\r\n'
        + value
        + b"\r\n"
        + dash
        + b"--\r\n"
    )
    return MULTIPART_TYPE, body


@st.composite
def _broken_multipart(draw: st.DrawFn) -> Body:
    good = encode_multipart([("name", "Ada"), ("message", MARKER)])
    choice = draw(
        st.sampled_from(
            [
                "other boundary",
                "no boundary",
                "empty boundary",
                "long boundary",
                "quoted boundary",
                "no crlf",
                "no disposition",
                "no name",
                "truncated",
                "junk around",
                "huge header",
                "part charset",
            ]
        )
    )
    content_type = MULTIPART_TYPE
    body = good
    if choice == "other boundary":
        content_type = "multipart/form-data; boundary=not-the-one"
    elif choice == "no boundary":
        content_type = "multipart/form-data"
    elif choice == "empty boundary":
        content_type = "multipart/form-data; boundary="
    elif choice == "long boundary":
        boundary = "b" * draw(st.sampled_from([70, 71, 200, 5_000]))
        content_type = f"multipart/form-data; boundary={boundary}"
        body = encode_multipart([("name", "Ada")], boundary=boundary)
    elif choice == "quoted boundary":
        content_type = f'multipart/form-data; boundary="{BOUNDARY}"; charset=utf-8'
    elif choice == "no crlf":
        body = good.replace(b"\r\n", b"\n")
    elif choice == "no disposition":
        body = good.replace(b"Content-Disposition", b"Content-Dispositio")
    elif choice == "no name":
        body = good.replace(b'name="name"', b'filename="x"')
    elif choice == "truncated":
        body = good[: draw(st.integers(0, len(good) - 1))]
    elif choice == "junk around":
        body = b"preamble \x00\xff\r\n" + good + b"epilogue \xff"
    elif choice == "huge header":
        body = good.replace(
            b"Content-Disposition", b"X-Junk: " + b"j" * 300_000 + b"\r\nContent-Disposition", 1
        )
    else:
        charset = draw(charsets() | st.sampled_from(["utf\x00-8", "base64", "x" * 500]))
        body = good.replace(
            b"\r\n\r\nAda",
            f"\r\nContent-Type: text/plain; charset={charset}\r\n\r\nAda".encode(),
            1,
        )
    return content_type, body


@st.composite
def _odd_charsets(draw: st.DrawFn) -> Body:
    charset = draw(st.sampled_from(CHARSETS) | st.sampled_from(["utf-16", "utf-7", "idna"]))
    mime = draw(st.sampled_from([JSON_TYPE, URLENCODED_TYPE]))
    text = json.dumps({"name": "Ada é ☃"}) if mime == JSON_TYPE else "name=Ada+%C3%A9&x=%E2%98%83"
    try:
        data = text.encode(charset)
    except (LookupError, UnicodeError, ValueError):
        data = text.encode("utf-8")
    return f"{mime}; charset={charset}", data


def bodies() -> st.SearchStrategy[Body]:
    return st.one_of(
        _valid(),
        hostile_bodies(),
        _at_the_limits(),
        _deep_json(),
        _many_fields(),
        _nul_and_bad_bytes(),
        _broken_multipart(),
        _odd_charsets(),
    )


# -- headers and requests ----------------------------------------------------------------


@frozen
class Sent:
    method: str
    path: str
    headers: tuple[tuple[str, bytes], ...]
    body: bytes
    accept: str  # "html", "json" or "either": what the answer's format must be
    origin: str | None


def _header_bytes(value: str) -> bytes:
    # What an HTTP server hands over: no line breaks inside a value. A lone surrogate goes
    # as the bytes UTF-8 would give it, which no valid UTF-8 holds: hostile bytes a client
    # may send, where encoding it strictly failed the test's own drawing.
    return value.replace("\r", "").replace("\n", "").encode("utf-8", "surrogatepass")


def _echoable(origin: str | None) -> str | None:
    """An Origin the answer echoes: browsers send ASCII (a host in punycode), and the
    test client cannot read back a header that is not. An empty one is none at all, as a
    server strips a value that is only spaces."""
    if origin is None:
        return None
    cleaned = origin.replace("\r", "").replace("\n", "")
    return cleaned if cleaned.strip() and cleaned.isascii() else None


def _content_lengths(size: int) -> st.SearchStrategy[str | None]:
    return st.one_of(
        st.none(),
        st.just(str(size)),
        st.sampled_from(
            [
                "0",
                str(max(0, size - 1)),
                str(size + 1),
                "262145",
                "99999999999999999999999",
                "-1",
                "abc",
                " 12 ",
                "0x10",
                "1e3",
                "²",
                "٣",
            ]
        ),
    )


def _forwarded_for() -> st.SearchStrategy[str | None]:
    return st.one_of(
        st.none(),
        st.sampled_from(
            [
                "198.51.100.7",
                "198.51.100.7, 203.0.113.9",
                "::1",
                "fe80::1%eth0",
                "2001:db8::1, garbage",
                ", , ,",
                "unknown",
                ", ".join(["10.0.0.1"] * 500),
            ]
        ),
        any_text_headers(),
    )


@st.composite
def _headers(draw: st.DrawFn, body: Body, server: bool, api_key: str) -> Sent:
    content_type, data = body
    headers: list[tuple[str, str]] = []
    if draw(st.integers(0, 4)) == 0:
        content_type = draw(
            content_types()
            | st.sampled_from(["application/json\x00", "application/json; charset=utf\x00"])
        )
    if content_type is not None:
        headers.append(("content-type", content_type))
    length = draw(_content_lengths(len(data)))
    if length is not None:
        headers.append(("content-length", length))
    accept_kind = draw(st.sampled_from(["html", "json", "either"]))
    if accept_kind == "html":
        accept: str | None = draw(st.sampled_from(BROWSER_ACCEPTS))
    elif accept_kind == "json":
        accept = draw(st.sampled_from((*JSON_ACCEPTS, None)))
    else:
        accept = draw(any_text_headers().map(lambda a: a + "<script>" + MARKER))
    if accept is not None:
        headers.append(("accept", accept))
    origin = draw(st.one_of(st.just(LISTED_ORIGIN), origins()).map(_echoable))
    if origin is not None:
        headers.append(("origin", origin))
    key = draw(st.one_of(st.none(), idempotency_keys(), invalid_idempotency_keys()))
    if key is not None:
        headers.append(("idempotency-key", key))
    token = draw(
        st.one_of(
            st.none(), st.sampled_from([PASSING_TOKEN, FLAKY_TOKEN, MARKER]), any_text_headers()
        )
    )
    if token is not None:
        headers.append(("x-challenge-token", token))
    valid = f"Bearer {api_key}"
    hostile = st.one_of(
        st.none(),
        st.sampled_from(["Bearer", "Basic YTpi", f"Bearer {api_key}\x00", f"Bearer {MARKER}"]),
        any_text_headers(),
    )
    # A working key most of the time on the server route, so that the body is read.
    working = st.sampled_from([valid, valid, valid, f"bearer   {api_key}  "])
    authorization = draw(st.integers(0, 3).flatmap(lambda n: working if server and n else hostile))
    if authorization is not None:
        headers.append(("authorization", authorization))
    for forwarded in draw(st.lists(_forwarded_for(), max_size=2)):
        if forwarded is not None:
            headers.append(("x-forwarded-for", forwarded))
    return Sent(
        method="POST",
        path="",
        headers=tuple((name, _header_bytes(value)) for name, value in headers),
        body=data,
        accept=accept_kind,
        origin=origin,
    )


@st.composite
def submissions(draw: st.DrawFn, world: World) -> Sent:
    """A hostile body and hostile headers, sent to one of the real forms."""
    server = draw(st.booleans())
    # The plain form most of the time: the others refuse before the body is read.
    if server:
        form_id = draw(
            st.sampled_from(
                [*[world.plain_form_id] * 4, *world.server_form_ids, "frm_nope", world.plain_key]
            )
        )
        path = f"/v1/forms/{form_id}/submissions"
    else:
        key = draw(st.sampled_from([*[world.plain_key] * 4, *world.public_keys, "no-such-key"]))
        path = f"/f/{key}"
    sent = draw(_headers(draw(bodies()), server, world.api_key))
    return Sent("POST", path, sent.headers, sent.body, sent.accept, sent.origin)


@st.composite
def odd_paths(draw: st.DrawFn, world: World) -> str:
    key, form_id = world.plain_key, world.plain_form_id
    text = draw(st.text(max_size=30))
    return draw(
        st.sampled_from(
            [
                f"/f/{key}/",
                f"/f/{key}//",
                f"//f/{key}",
                f"/f/{key}/thanks",
                f"/f/{key}/thanks/",
                f"/f/{key}/x",
                f"/f/{key}?_next=https://evil.example",
                f"/f/{key}%2F",
                f"/f/%2e%2e/{key}",
                "/f/..%2f..%2fetc%2fpasswd",
                "/f/%00",
                "/f/%ff%fe",
                "/f/%ZZ",
                "/f/",
                "/f",
                "/F/" + key,
                f"/f/{quote(text, safe='')}",
                f"/f/{quote(text)}",
                "/f/" + "k" * 8_000,
                f"/v1/forms/{form_id}/submissions/",
                f"/v1/forms/{form_id}",
                f"/v1/forms/{form_id}/submissions/x",
                "/v1/forms//submissions",
                f"/v1/forms/{quote(text, safe='')}/submissions",
                "/v2/forms/x/submissions",
                "/",
                "/nothing/here",
                "/healthz/",
                "/openapi.json/",
            ]
        )
    )


@st.composite
def wanderers(draw: st.DrawFn, world: World) -> Sent:
    """Odd paths and methods, each with a plain body and some hostile headers."""
    path = draw(
        st.one_of(odd_paths(world), st.sampled_from([f"/f/{world.plain_key}"] * 2)),
    )
    method = draw(
        st.sampled_from(["POST", "POST", "OPTIONS", "GET", "PUT", "DELETE", "PATCH", "PROPFIND"])
    )
    sent = draw(_headers(draw(_valid()), path.startswith("/v1/"), world.api_key))
    return Sent(method, path, sent.headers, sent.body, sent.accept, sent.origin)


def _raw_values(*meaningful: str) -> st.SearchStrategy[bytes]:
    """A header value as bytes: a meaningful one, latin-1 text, or any bytes but a line
    break (which no server passes on inside a value)."""
    return st.one_of(
        st.sampled_from(meaningful).map(lambda v: v.encode("latin-1")),
        st.text(st.characters(max_codepoint=0xFF), max_size=40).map(lambda v: v.encode("latin-1")),
        st.binary(max_size=40),
    ).map(lambda v: v.replace(b"\r", b"").replace(b"\n", b""))


@st.composite
def raw_submissions(draw: st.DrawFn, world: World) -> tuple[Sent, tuple[int, ...]]:
    """Header bytes a client chooses, repeated headers, and a body in pieces."""
    server = draw(st.booleans())
    path = f"/v1/forms/{world.plain_form_id}/submissions" if server else f"/f/{world.plain_key}"
    content_type, body = draw(bodies())
    valid_key = f"Bearer {world.api_key}".encode()
    # The body's own type, and on the server route a working key, most of the time: the
    # request then gets as far as the body.
    usual = {"content-type": _header_bytes(content_type or "")}
    if server:
        usual["authorization"] = valid_key
    candidates: list[tuple[str, st.SearchStrategy[bytes]]] = [
        ("content-type", _raw_values("application/json; charset=latin-1", "text/plain")),
        ("content-length", _raw_values(str(len(body)), "²", "0", "1" * 30, "-0")),
        ("transfer-encoding", _raw_values("chunked", "gzip")),
        ("accept", _raw_values(*BROWSER_ACCEPTS, *JSON_ACCEPTS)),
        ("origin", _raw_values(LISTED_ORIGIN, "null")),
        ("idempotency-key", _raw_values("key-1", "ké")),
        ("x-challenge-token", _raw_values(PASSING_TOKEN, FLAKY_TOKEN)),
        ("authorization", _raw_values("Bearer \xff", "Basic Og==")),
        ("x-forwarded-for", _raw_values("198.51.100.7", "::1", "1.2.3.4, 203.0.113.9")),
    ]
    headers: list[tuple[str, bytes]] = []
    for name, values in candidates:
        choices = (
            st.one_of(st.just(usual[name]), st.just(usual[name]), values)
            if name in usual
            else values
        )
        for value in draw(st.lists(choices, min_size=name in usual, max_size=2)):
            if name == "origin" and not value.strip():
                continue  # no Origin at all, as a server sees an empty one
            headers.append((name, value))
    accept = next((value for name, value in headers if name == "accept"), None)
    cuts = tuple(draw(st.lists(st.integers(0, max(0, len(body))), max_size=5)))
    origin = next((value for name, value in headers if name == "origin"), None)
    sent = Sent(
        method="POST",
        path=path,
        headers=tuple(headers),
        body=body,
        accept="either" if accept is not None else "json",
        origin=origin.decode("latin-1") if origin is not None else None,
    )
    return sent, cuts


# -- what every answer must be -----------------------------------------------------------


def _send(world: World, sent: Sent) -> httpx2.Response:
    world.records.clear()
    headers = [(name.encode("ascii"), value) for name, value in sent.headers]
    response = world.client.request(sent.method, sent.path, content=sent.body, headers=headers)
    response.read()
    return response


async def _exchange(
    app: ASGIApp, scope: Scope, chunks: list[bytes]
) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    """One request straight into the app, its body in `chunks`, as a server hands it
    over: header bytes exactly as sent, the path decoded from the raw path."""
    pending = list(chunks)
    answer: dict[str, Any] = {"status": 0, "headers": [], "body": b""}

    async def receive() -> Message:
        if not pending:
            return {"type": "http.disconnect"}
        chunk = pending.pop(0)
        return {"type": "http.request", "body": chunk, "more_body": bool(pending)}

    async def send(message: Message) -> None:
        if message["type"] == "http.response.start":
            answer["status"] = message["status"]
            answer["headers"] = list(message.get("headers", []))
        elif message["type"] == "http.response.body":
            answer["body"] += message.get("body", b"")

    await app(scope, receive, send)
    return answer["status"], answer["headers"], answer["body"]


def _send_raw(world: World, sent: Sent, cuts: tuple[int, ...]) -> httpx2.Response:
    """`sent` over ASGI without the test client, which re-encodes header values as UTF-8:
    here a value is any bytes a server may pass on, and the body comes in pieces."""
    world.records.clear()
    raw_path, _, query = sent.path.encode("ascii").partition(b"?")
    headers = [(name.encode("ascii"), value) for name, value in sent.headers]
    scope: Scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": sent.method,
        "scheme": "http",
        "path": unquote(raw_path.decode("ascii")),
        "raw_path": raw_path,
        "root_path": "",
        "query_string": query,
        "headers": headers,
        "client": (PEER, 1234),
        "server": ("testserver", 80),
    }
    offsets = sorted({0, len(sent.body), *(c for c in cuts if 0 < c < len(sent.body))})
    chunks = [sent.body[a:b] for a, b in itertools.pairwise(offsets)] or [b""]
    portal = world.client.portal
    assert portal is not None
    status, response_headers, body = portal.call(_exchange, world.client.app, scope, chunks)
    request = httpx2.Request(sent.method, f"http://testserver{sent.path}", headers=headers)
    return httpx2.Response(status, headers=response_headers, content=body, request=request)


# Unknown paths under /v1 are the management API's (not_found).
ANSWERED_ERRORS = {**SPEC_ERRORS, **MANAGEMENT_ERRORS}


def _messages_for(status: int) -> set[str]:
    if status == 405:
        return {SPEC_ERRORS["malformed_request"][1]}
    return {message for code_status, message in ANSWERED_ERRORS.values() if code_status == status}


def _check_envelope(body: Any, status: int, request_id: str) -> None:
    assert isinstance(body, dict)
    assert set(body) == {"ok", "error", "request_id"}, body
    assert body["ok"] is False
    assert body["request_id"] == request_id
    error = body["error"]
    code = error["code"]
    assert code in ANSWERED_ERRORS, code
    expected_status, message = ANSWERED_ERRORS[code]
    if status == 405:
        assert code == "malformed_request"
    else:
        assert status == expected_status, (status, code)
    assert error["message"] == message
    if code == "validation_failed":
        assert set(error) == {"code", "message", "fields"}
        fields = error["fields"]
        assert fields
        assert isinstance(fields, dict)
        assert all(isinstance(k, str) and isinstance(v, str) for k, v in fields.items())
    else:
        assert set(error) == {"code", "message"}, error


def _check_redirect(world: World, location: str, sent: Sent, where: str) -> None:
    """Never an open redirect: the thank-you page, or a `_next` on the request's own
    origin or on the form's allow-list (no form here has a redirect URL of its own)."""
    if location.startswith("/"):
        assert location.startswith("/f/"), where
        assert location.endswith("/thanks"), where
        return
    target = normalize_origin(location)
    assert target is not None, f"{where}: to {location!r}"
    allowed = {normalize_origin(sent.origin or "")}
    if sent.path == f"/f/{world.listed_key}":
        allowed.add(LISTED_ORIGIN)
    assert target in allowed, f"{where}: an open redirect to {location!r}"


def check_answer(world: World, sent: Sent, response: httpx2.Response) -> None:
    status = response.status_code
    where = f"{sent.method} {sent.path[:80]} -> {status}"
    request_id = response.headers.get("x-request-id", "")
    assert REQUEST_ID.fullmatch(request_id), where
    assert status in ALLOWED_STATUSES, f"{where}: not a status the specification lists"
    if status >= 500:
        assert status == 503, where
        assert response.headers.get("retry-after", "").isdigit(), where
    faults = [r for r in world.records if r.levelno >= logging.ERROR]
    assert not faults, f"{where}: {faults[0].getMessage()} {faults[0].exc_info}"
    logged = "\n".join(JsonFormatter().format(record) for record in world.records)
    assert MARKER not in logged, f"{where}: a submission's contents or a secret was logged"
    world.spec.check(response)
    if sent.path.startswith("/f/") and sent.origin and sent.origin.isascii():
        echoed = response.headers.get("access-control-allow-origin") or ""
        assert echoed.strip() == sent.origin.strip(), f"{where}: the Origin is not echoed"
    if status == 204:
        assert sent.method == "OPTIONS", where
        assert not response.content
        return
    if status == 303:
        assert sent.accept != "json", where
        assert not response.content
        _check_redirect(world, response.headers["location"], sent, where)
        return
    content_type = response.headers.get("content-type", "")
    if status in (200, 201):
        if sent.method == "GET":  # the thank-you page
            assert content_type.startswith("text/html"), where
            assert MARKER not in response.text
            return
        assert content_type.startswith("application/json"), where
        assert sent.accept != "html", where
        body = response.json()
        assert set(body) == {"ok", "submission_id", "message"}, body
        assert body["ok"] is True
        assert body["message"] == CONFIRMATION
        assert (status == 200) == (response.headers.get("idempotent-replayed") == "true"), where
        return
    if status == 405:
        assert response.headers.get("allow"), where
    if content_type.startswith("text/html"):
        assert sent.accept != "json", f"{where}: an HTML page for a JSON client"
        page = response.text
        assert any(html.escape(message) in page for message in _messages_for(status)), page
        assert MARKER not in page, f"{where}: the page reflects the request"
        assert "<script" not in page.lower(), where
        assert "default-src 'none'" in response.headers["content-security-policy"]
        return
    assert content_type.startswith("application/json"), f"{where}: {content_type!r}"
    # The management API speaks JSON to everyone; the submission endpoints (the
    # server-side one is a POST to /v1/forms/{id}/submissions) speak HTML to browsers.
    submitting = sent.method == "POST" and sent.path.endswith("/submissions")
    management = sent.path.startswith("/v1/") and not submitting
    assert management or sent.accept != "html", f"{where}: JSON for a browser"
    _check_envelope(response.json(), status, request_id)


SETTINGS = settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@SETTINGS
@given(data=st.data())
def test_hostile_submissions_get_only_answers_the_specification_allows(
    world: World, data: st.DataObject
) -> None:
    sent = data.draw(submissions(world))

    response = _send(world, sent)

    event(f"status {response.status_code}")
    check_answer(world, sent, response)


@settings(SETTINGS, max_examples=100)
@given(data=st.data())
def test_hostile_paths_and_methods_get_the_envelope(world: World, data: st.DataObject) -> None:
    sent = data.draw(wanderers(world))

    response = _send(world, sent)

    event(f"status {response.status_code}")
    check_answer(world, sent, response)


@settings(SETTINGS, max_examples=150)
@given(data=st.data())
def test_hostile_header_bytes_and_split_bodies_get_the_envelope(
    world: World, data: st.DataObject
) -> None:
    sent, cuts = data.draw(raw_submissions(world))

    response = _send_raw(world, sent, cuts)

    event(f"status {response.status_code}")
    check_answer(world, sent, response)


def test_the_hostile_requests_reach_every_step(world: World) -> None:
    """The strategies are not all refused early: the same kinds of request, sent once
    each, reach a success, a browser's redirect, a replay and each kind of refusal."""
    plain = f"/f/{world.plain_key}"
    ctype, body = URLENCODED_TYPE, encode_urlencoded([("name", f"Ada {MARKER}")])
    form_type = (("content-type", ctype.encode()),)
    cases = [
        (Sent("POST", plain, form_type, body, "json", None), 201),
        (
            Sent(
                "POST",
                plain,
                (("content-type", ctype.encode()), ("accept", BROWSER_ACCEPTS[1].encode())),
                body,
                "html",
                None,
            ),
            303,
        ),
        (Sent("POST", plain, (("content-type", b"text/plain"),), body, "json", None), 415),
        (Sent("POST", plain, (("content-type", JSON_TYPE.encode()),), b"{", "json", None), 400),
        (
            Sent("POST", plain, (("content-type", JSON_TYPE.encode()),), b"[" * 5000, "json", None),
            413,
        ),
        (Sent("GET", plain, (), b"", "json", None), 405),
        (Sent("POST", "/f/nope", (("accept", b"text/html"),), b"", "html", None), 404),
    ]
    replay = (("content-type", ctype.encode()), ("idempotency-key", b"reach-1"))
    for sent, expected in [*cases, (Sent("POST", plain, replay, body, "json", None), 201)]:
        response = _send(world, sent)
        check_answer(world, sent, response)
        assert response.status_code == expected, (sent, response.text)
    again = _send(world, Sent("POST", plain, replay, body, "json", None))
    assert again.status_code == 200
