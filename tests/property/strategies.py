"""Hypothesis strategies for driving the whole pipeline: payloads and their three wire
encodings (with a small multipart encoder of our own), header values, payloads over the
limits, and worlds in which a chosen subset of the checks of part 4.3 fails."""

from __future__ import annotations

import encodings.aliases
import enum
import itertools
import json
from collections.abc import Mapping, Sequence
from typing import TypeAlias
from urllib.parse import quote_plus

from attrs import frozen
from hypothesis import strategies as st

from intake.domain.controls import CHALLENGE_TOKEN_FIELDS
from intake.domain.errors import ErrorCode
from intake.domain.limits import PayloadLimits
from intake.domain.model import FieldData, FieldValue, Plan
from intake.domain.quota import PlanTerms
from intake.domain.steps import Step
from intake.service.messages import FieldsBody, RawBody
from tests.property.world import stream

LIMITS = PayloadLimits()

# A payload as a client means it: each name with its values in order (a repeated name,
# a checkbox group, has several). One value is sent as a plain field or JSON scalar.
Payload: TypeAlias = dict[str, list[str]]

# ---------------------------------------------------------------------------------------
# Field names and values


def _is_data_name(name: str) -> bool:
    """Not a control field (those are split out) and not `email` (the default rule)."""
    return not name.startswith("_") and name not in CHALLENGE_TOKEN_FIELDS and name != "email"


# Names a browser sends as they are: multipart quotes the name, so no `"`, `\`, CR or LF.
# (The utf-8 codec leaves out lone surrogates, which are not text.)
_NAME_CHARS = st.characters(codec="utf-8", exclude_categories=["Cc"], exclude_characters='"\\')
# NUL is refused as malformed: no form field holds it, and PostgreSQL cannot store it.
_VALUE_CHARS = st.characters(codec="utf-8", exclude_characters="\x00")


def field_names(*, exclude: Sequence[str] = ()) -> st.SearchStrategy[str]:
    return st.text(_NAME_CHARS, min_size=1, max_size=16).filter(
        lambda n: _is_data_name(n) and n not in exclude
    )


def field_values(max_size: int = 24) -> st.SearchStrategy[str]:
    return st.text(_VALUE_CHARS, max_size=max_size)


def payloads(
    *, min_size: int = 0, max_size: int = 5, exclude: Sequence[str] = ()
) -> st.SearchStrategy[Payload]:
    return st.dictionaries(
        field_names(exclude=exclude),
        st.lists(field_values(), min_size=1, max_size=3),
        min_size=min_size,
        max_size=max_size,
    )


def as_fields(payload: Mapping[str, Sequence[str]]) -> FieldData:
    """What the pipeline parses a payload into, whatever the wire format."""
    fields: FieldData = {}
    for name, values in payload.items():
        fields[name] = values[0] if len(values) == 1 else list[FieldValue](values)
    return fields


def pairs(payload: Mapping[str, Sequence[str]]) -> list[tuple[str, str]]:
    return [(name, value) for name, values in payload.items() for value in values]


@st.composite
def wire_orders(draw: st.DrawFn, payload: Mapping[str, Sequence[str]]) -> list[tuple[str, str]]:
    """The payload's pairs in any order on the wire that keeps each name's values in order."""
    names = draw(st.permutations([name for name, _ in pairs(payload)]))
    taken = dict.fromkeys(payload, 0)
    ordered = []
    for name in names:
        ordered.append((name, payload[name][taken[name]]))
        taken[name] += 1
    return ordered


# ---------------------------------------------------------------------------------------
# The three wire formats, and in-process fields


class Wire(enum.Enum):
    URLENCODED = "urlencoded"
    JSON = "json"
    MULTIPART = "multipart"
    FIELDS = "fields"  # FieldsBody: no content type, the same limits


BOUNDARY = "----intake-property-7d1f0c2b9a"
URLENCODED_TYPE = "application/x-www-form-urlencoded"
JSON_TYPE = "application/json"
MULTIPART_TYPE = f"multipart/form-data; boundary={BOUNDARY}"


def encode_urlencoded(fields: Sequence[tuple[str, str]]) -> bytes:
    return "&".join(
        f"{quote_plus(name, safe='')}={quote_plus(value, safe='')}" for name, value in fields
    ).encode("ascii")


def encode_json(payload: Mapping[str, object]) -> bytes:
    return json.dumps(payload, ensure_ascii=False).encode("utf-8")


def encode_multipart(
    fields: Sequence[tuple[str, str]],
    boundary: str = BOUNDARY,
    *,
    files: Sequence[tuple[str, str, bytes]] = (),
    close: bool = True,
) -> bytes:
    """multipart/form-data as a browser writes it (RFC 7578); `files` are (name, filename,
    content). Without `close` the final boundary is missing: a truncated body."""
    out = bytearray()
    for name, value in fields:
        out += f"--{boundary}\r\n".encode("ascii")
        out += f'Content-Disposition: form-data; name="{name}"\r\n\r\n'.encode()
        out += value.encode("utf-8") + b"\r\n"
    for name, filename, content in files:
        out += f"--{boundary}\r\n".encode("ascii")
        out += f'Content-Disposition: form-data; name="{name}"; filename="{filename}"\r\n'.encode()
        out += b"Content-Type: application/octet-stream\r\n\r\n" + content + b"\r\n"
    if close:
        out += f"--{boundary}--\r\n".encode("ascii")
    return bytes(out)


@frozen
class WireBody:
    """A body as plain data, opened into a fresh RawBody stream for each submission."""

    content_type: str | None
    data: bytes
    cuts: tuple[int, ...] = ()
    declared: int | None = None  # the Content-Length header, when sent

    def open(self, *, yield_between: bool = False) -> RawBody:
        offsets = sorted({0, len(self.data), *(c for c in self.cuts if 0 < c < len(self.data))})
        chunks = [self.data[a:b] for a, b in itertools.pairwise(offsets)]
        return RawBody(
            self.content_type, self.declared, stream(chunks, yield_between=yield_between)
        )


Sendable: TypeAlias = WireBody | FieldsBody


def open_body(body: Sendable, *, yield_between: bool = False) -> RawBody | FieldsBody:
    if isinstance(body, FieldsBody):
        return FieldsBody(dict(body.fields))
    return body.open(yield_between=yield_between)


def encode(
    payload: Mapping[str, Sequence[str]],
    wire: Wire,
    order: Sequence[tuple[str, str]] | None = None,
) -> Sendable:
    """The payload in one wire format, pairs in `order` (default: as the payload lists)."""
    fields = list(order) if order is not None else pairs(payload)
    if wire is Wire.URLENCODED:
        return WireBody(URLENCODED_TYPE, encode_urlencoded(fields))
    if wire is Wire.JSON:
        return WireBody(JSON_TYPE, encode_json(as_fields(payload)))
    if wire is Wire.MULTIPART:
        return WireBody(MULTIPART_TYPE, encode_multipart(fields))
    return FieldsBody(as_fields(payload))


@st.composite
def sent_as(draw: st.DrawFn, payload: Mapping[str, Sequence[str]], wire: Wire) -> Sendable:
    """The payload in `wire`, in any pair order, cut into any chunks, with or without a
    truthful Content-Length."""
    body = encode(payload, wire, draw(wire_orders(payload)))
    if isinstance(body, FieldsBody):
        return body
    size = len(body.data)
    cuts = draw(st.lists(st.integers(1, max(1, size - 1)), max_size=4)) if size > 1 else []
    declared = draw(st.sampled_from([None, size]))
    return WireBody(body.content_type, body.data, tuple(cuts), declared)


# ---------------------------------------------------------------------------------------
# Header values


def idempotency_keys() -> st.SearchStrategy[str]:
    """Valid keys: 1 to 255 printable ASCII characters."""
    return st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), min_size=1, max_size=255)


def invalid_idempotency_keys() -> st.SearchStrategy[str]:
    return st.one_of(
        st.just(""),
        st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), min_size=256, max_size=300),
        st.tuples(
            st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=10),
            st.characters().filter(lambda ch: not " " <= ch <= "~"),
            st.text(max_size=10),
        ).map("".join),
    )


def any_text_headers() -> st.SearchStrategy[str]:
    """A header value as an HTTP server hands it over (latin-1 text), or as a library
    caller might (any text)."""
    latin_1 = st.characters(max_codepoint=0xFF)
    return st.text(latin_1, max_size=80) | st.text(max_size=40)


def origins() -> st.SearchStrategy[str | None]:
    return st.one_of(
        st.none(),
        st.sampled_from(
            [
                "https://shop.example",
                "https://SHOP.example:443",
                "http://shop.example",
                "https://evil.example",
                "null",
                "https://[::1",
                "http://host:99999",
                "",
            ]
        ),
        any_text_headers(),
        st.text(max_size=40),
    )


# Every codec name Python knows (text encodings, and codecs such as base64 that are not
# text encodings), and names it does not know.
CHARSETS = (
    *sorted({*encodings.aliases.aliases.values(), "utf-8", "UTF-8", "idna", "punycode"}),
    *("nope", "x-unknown", "utf-9", ""),
)
# The common ones, drawn as often as all the rest together.
COMMON_CHARSETS = ("utf-8", "UTF-8", "latin-1", "iso-8859-1", "windows-1252", "us-ascii")


def charsets() -> st.SearchStrategy[str]:
    return st.sampled_from(COMMON_CHARSETS) | st.sampled_from(CHARSETS)


SUPPORTED_MIMES = ("application/x-www-form-urlencoded", "multipart/form-data", "application/json")


def _case(text: str, flips: Sequence[bool]) -> str:
    return "".join(ch.upper() if flip else ch for ch, flip in zip(text, flips, strict=False))


@st.composite
def supported_content_types(draw: st.DrawFn) -> str:
    """One of the three types, in any case, with parameters a client may send."""
    mime = draw(st.sampled_from(SUPPORTED_MIMES))
    mime = _case(mime, draw(st.lists(st.booleans(), min_size=len(mime), max_size=len(mime))))
    params = []
    if mime.lower() == "multipart/form-data":
        boundary = draw(
            st.sampled_from([BOUNDARY, f'"{BOUNDARY}"', "x", "other-boundary", "", None])
        )
        if boundary is not None:
            params.append(f"boundary={boundary}")
    if draw(st.booleans()):
        params.append(f"charset={draw(charsets())}")
    if draw(st.booleans()):
        params.append("version=1")
    params = draw(st.permutations(params))
    space = draw(st.sampled_from(["", " ", "  "]))
    return ";".join([mime, *(f"{space}{p}" for p in params)])


def _is_supported(header: str) -> bool:
    mime = header.split(";", 1)[0].strip().lower()
    return mime in SUPPORTED_MIMES


def unsupported_content_types() -> st.SearchStrategy[str | None]:
    return st.one_of(
        st.none(),
        st.sampled_from(
            ["", "text/plain", "application/xml", "multipart/mixed; boundary=x", "json", "*/*"]
        ),
        any_text_headers().filter(lambda h: not _is_supported(h)),
    )


def content_types() -> st.SearchStrategy[str | None]:
    return st.one_of(supported_content_types(), unsupported_content_types())


# ---------------------------------------------------------------------------------------
# Arbitrary JSON documents, for bodies that parse but hold anything


def json_values(max_leaves: int = 12) -> st.SearchStrategy[object]:
    scalars = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.floats(),
        st.text(max_size=20),
        st.sampled_from(["ada@example.com", "not-an-email", "https://a.example", "  ", "1e3"]),
    )
    return st.recursive(
        scalars,
        lambda inner: st.one_of(
            st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
        ),
        max_leaves=max_leaves,
    )


# Control fields and names with rules attached, so fuzzed bodies reach every step.
INTERESTING_NAMES = (
    "_gotcha",
    "_next",
    "_subject",
    "_replyto",
    "_other",
    "email",
    "name",
    "message",
    *CHALLENGE_TOKEN_FIELDS,
)


def hostile_names() -> st.SearchStrategy[str]:
    return st.one_of(st.sampled_from(INTERESTING_NAMES), st.text(max_size=12))


def json_documents() -> st.SearchStrategy[dict[str, object]]:
    return st.dictionaries(hostile_names(), json_values(), max_size=6)


# ---------------------------------------------------------------------------------------
# Payloads at and over the limits (decisions.md "Payload")


class Limit(enum.Enum):
    VALUE = "field value"
    NAME = "field name"
    FIELDS = "number of fields"
    TOTAL = "total text"
    DEPTH = "JSON depth"
    BODY = "body size"


@frozen
class LimitCase:
    """A payload exactly at one limit (`over` False) or one unit past it, in one format."""

    limit: Limit
    over: bool
    multibyte: bool
    wire: Wire

    def fields(self) -> FieldData:
        n = 1 if self.over else 0
        fill = "é" if self.multibyte else "x"  # é is two UTF-8 bytes
        width = len(fill.encode("utf-8"))
        if self.limit is Limit.VALUE:
            return {"essay": fill * (LIMITS.max_value // width) + "x" * n}
        if self.limit is Limit.NAME:
            return {fill * (LIMITS.max_name // width) + "x" * n: "v"}
        if self.limit is Limit.FIELDS:
            return {f"f{i}": "v" for i in range(LIMITS.max_fields + n)}
        if self.limit is Limit.TOTAL:
            full, rest = divmod(LIMITS.max_total, LIMITS.max_value)
            fields: FieldData = {
                f"part{i}": fill * (LIMITS.max_value // width) for i in range(full)
            }
            fields["rest"] = "x" * (rest + n)
            return fields
        if self.limit is Limit.DEPTH:
            nested: FieldValue = "x"
            for level in range(LIMITS.max_depth - 1 + n):
                nested = {f"level{level}": nested}
            return {"outer": nested}
        raise ValueError("the body limit is about the encoding: see body()")

    def body(self) -> Sendable:
        if self.limit is not Limit.BODY:
            return encode_fields(self.fields(), self.wire)
        # Escaped text takes six bytes a character on the wire (`%C3%A9`, `\u00e9`) but
        # two as text, so the body limit is reached with every text limit kept; an ASCII
        # field pads the body to exactly the limit, or one byte past it.
        fields: dict[str, str] = {f"f{i}": "é" * (LIMITS.max_value // 2) for i in range(4)}
        fields["pad"] = ""
        target = LIMITS.max_body + (1 if self.over else 0)
        pad = target - len(_escaped(fields, self.wire))
        fields["pad"] = "x" * pad
        return WireBody(
            URLENCODED_TYPE if self.wire is Wire.URLENCODED else JSON_TYPE,
            _escaped(fields, self.wire),
        )


def _escaped(fields: dict[str, str], wire: Wire) -> bytes:
    if wire is Wire.URLENCODED:
        return encode_urlencoded(list(fields.items()))
    return json.dumps(fields).encode("ascii")


def _fits(limit: Limit, wire: Wire) -> bool:
    if limit is Limit.DEPTH:
        return wire in (Wire.JSON, Wire.FIELDS)
    if limit is Limit.BODY:
        return wire in (Wire.URLENCODED, Wire.JSON)
    return True


def limit_cases() -> st.SearchStrategy[LimitCase]:
    return st.builds(
        LimitCase,
        limit=st.sampled_from(Limit),
        over=st.booleans(),
        multibyte=st.booleans(),
        wire=st.sampled_from(Wire),
    ).filter(lambda case: _fits(case.limit, case.wire))


def encode_fields(fields: FieldData, wire: Wire) -> Sendable:
    """Fields that are all text (or nested, in JSON and in-process) in one wire format."""
    if wire is Wire.JSON:
        return WireBody(JSON_TYPE, encode_json(fields))
    if wire is Wire.FIELDS:
        return FieldsBody(fields)
    text_pairs = [(name, value) for name, value in fields.items() if isinstance(value, str)]
    assert len(text_pairs) == len(fields), "only JSON and in-process fields nest"
    if wire is Wire.URLENCODED:
        return WireBody(URLENCODED_TYPE, encode_urlencoded(text_pairs))
    return WireBody(MULTIPART_TYPE, encode_multipart(text_pairs))


# ---------------------------------------------------------------------------------------
# Worlds: a request and a world in which a chosen subset of the checks fails


class Endpoint(enum.Enum):
    PUBLIC = "public"  # POST /f/{public_form_key}
    SERVER = "server"  # POST /v1/forms/{form_id}/submissions, with an API key


class Fault(enum.Enum):
    """One way to make one check of part 4.3 fail. Several faults belong to one check."""

    # Step 1
    UNKNOWN_PUBLIC_KEY = "unknown public key"
    PROTECTED_FORM_ON_PUBLIC_ROUTE = "protected form on the public route"
    MALFORMED_AUTHORIZATION = "malformed Authorization header"
    REVOKED_API_KEY = "revoked API key"
    OTHER_WORKSPACES_FORM = "another workspace's form id"
    UNKNOWN_FORM_ID = "unknown form id"
    # Step 2
    FORM_PAUSED = "form paused"
    WORKSPACE_SUSPENDED = "workspace suspended"
    # Step 3
    RATE_LIMIT_EXHAUSTED = "rate limit exhausted"
    # Step 4
    WRONG_ORIGIN = "origin not on the list"
    MISSING_ORIGIN = "origin missing"
    # Step 5 (a body cut off while streaming is refused where the pipeline reads it)
    UNSUPPORTED_CONTENT_TYPE = "unsupported content type"
    MISSING_CONTENT_TYPE = "no content type"
    DECLARED_TOO_LONG = "Content-Length over the limit"
    STREAMED_TOO_LONG = "undeclared body over the limit"
    # Step 6
    BROKEN_BODY = "body not valid for its type"
    INVALID_IDEMPOTENCY_KEY = "invalid Idempotency-Key"
    FIELD_TOO_LONG = "a field value over the limit"
    # Step 7: not an error, a look-alike success
    HONEYPOT_FILLED = "honeypot filled"
    # Step 8
    CHALLENGE_REJECTED = "challenge token rejected"
    CHALLENGE_MISSING = "challenge token missing"
    # Step 9
    REQUIRED_FIELD_MISSING = "required field missing"
    EMAIL_INVALID = "email field not an address"
    FILE_UPLOADED = "a multipart file part (uploads are not accepted)"
    # Step 11
    QUOTA_LIMIT_ZERO = "monthly limit of zero"
    QUOTA_USED_UP = "monthly quota used up"
    # Step 12
    STORAGE_FAILS = "commit fails transiently"


@frozen
class Expected:
    """The check a fault fails, and the step and code the refusal reports."""

    check: Step
    step: Step
    code: ErrorCode | None  # None: the honeypot's look-alike success


def _expect(check: Step, code: ErrorCode | None, step: Step | None = None) -> Expected:
    return Expected(check, step if step is not None else check, code)


EXPECTED: Mapping[Fault, Expected] = {
    Fault.UNKNOWN_PUBLIC_KEY: _expect(Step.RESOLVE_FORM, ErrorCode.FORM_NOT_FOUND),
    Fault.PROTECTED_FORM_ON_PUBLIC_ROUTE: _expect(Step.RESOLVE_FORM, ErrorCode.UNAUTHORIZED),
    Fault.MALFORMED_AUTHORIZATION: _expect(Step.RESOLVE_FORM, ErrorCode.UNAUTHORIZED),
    Fault.REVOKED_API_KEY: _expect(Step.RESOLVE_FORM, ErrorCode.UNAUTHORIZED),
    Fault.OTHER_WORKSPACES_FORM: _expect(Step.RESOLVE_FORM, ErrorCode.FORM_NOT_FOUND),
    Fault.UNKNOWN_FORM_ID: _expect(Step.RESOLVE_FORM, ErrorCode.FORM_NOT_FOUND),
    Fault.FORM_PAUSED: _expect(Step.CHECK_ENABLED, ErrorCode.FORM_DISABLED),
    Fault.WORKSPACE_SUSPENDED: _expect(Step.CHECK_ENABLED, ErrorCode.FORM_DISABLED),
    Fault.RATE_LIMIT_EXHAUSTED: _expect(Step.RATE_LIMIT, ErrorCode.RATE_LIMITED),
    Fault.WRONG_ORIGIN: _expect(Step.ORIGIN_POLICY, ErrorCode.ORIGIN_NOT_ALLOWED),
    Fault.MISSING_ORIGIN: _expect(Step.ORIGIN_POLICY, ErrorCode.ORIGIN_NOT_ALLOWED),
    Fault.UNSUPPORTED_CONTENT_TYPE: _expect(
        Step.CONTENT_TYPE_AND_SIZE, ErrorCode.UNSUPPORTED_CONTENT_TYPE
    ),
    Fault.MISSING_CONTENT_TYPE: _expect(
        Step.CONTENT_TYPE_AND_SIZE, ErrorCode.UNSUPPORTED_CONTENT_TYPE
    ),
    Fault.DECLARED_TOO_LONG: _expect(Step.CONTENT_TYPE_AND_SIZE, ErrorCode.PAYLOAD_TOO_LARGE),
    # Only reading the body shows it is too long; the reader is cut off before parsing.
    Fault.STREAMED_TOO_LONG: _expect(
        Step.CONTENT_TYPE_AND_SIZE, ErrorCode.PAYLOAD_TOO_LARGE, Step.PARSE
    ),
    Fault.BROKEN_BODY: _expect(Step.PARSE, ErrorCode.MALFORMED_REQUEST),
    Fault.INVALID_IDEMPOTENCY_KEY: _expect(Step.PARSE, ErrorCode.MALFORMED_REQUEST),
    Fault.FIELD_TOO_LONG: _expect(Step.PARSE, ErrorCode.PAYLOAD_TOO_LARGE),
    Fault.HONEYPOT_FILLED: _expect(Step.HONEYPOT, None),
    Fault.CHALLENGE_REJECTED: _expect(Step.CHALLENGE, ErrorCode.CHALLENGE_FAILED),
    Fault.CHALLENGE_MISSING: _expect(Step.CHALLENGE, ErrorCode.CHALLENGE_FAILED),
    Fault.REQUIRED_FIELD_MISSING: _expect(Step.VALIDATE, ErrorCode.VALIDATION_FAILED),
    Fault.EMAIL_INVALID: _expect(Step.VALIDATE, ErrorCode.VALIDATION_FAILED),
    Fault.FILE_UPLOADED: _expect(Step.VALIDATE, ErrorCode.VALIDATION_FAILED),
    Fault.QUOTA_LIMIT_ZERO: _expect(Step.QUOTA, ErrorCode.QUOTA_EXCEEDED),
    Fault.QUOTA_USED_UP: _expect(Step.QUOTA, ErrorCode.QUOTA_EXCEEDED),
    Fault.STORAGE_FAILS: _expect(Step.COMMIT, ErrorCode.SERVICE_UNAVAILABLE),
}


def _faults_of(check: Step, route: Endpoint, wire: Wire) -> list[Fault]:
    """The faults that fail `check` and can be arranged for this route and wire format."""
    public = route is Endpoint.PUBLIC
    raw = wire is not Wire.FIELDS
    ruled_out = set()
    if public:
        ruled_out |= {
            Fault.MALFORMED_AUTHORIZATION,
            Fault.REVOKED_API_KEY,
            Fault.OTHER_WORKSPACES_FORM,
            Fault.UNKNOWN_FORM_ID,
        }
    else:
        # The origin list and the challenge do not apply to an authenticated caller.
        ruled_out |= {
            Fault.UNKNOWN_PUBLIC_KEY,
            Fault.PROTECTED_FORM_ON_PUBLIC_ROUTE,
            Fault.WRONG_ORIGIN,
            Fault.MISSING_ORIGIN,
            Fault.CHALLENGE_REJECTED,
            Fault.CHALLENGE_MISSING,
        }
    if not raw:
        ruled_out |= {
            Fault.UNSUPPORTED_CONTENT_TYPE,
            Fault.MISSING_CONTENT_TYPE,
            Fault.DECLARED_TOO_LONG,
            Fault.STREAMED_TOO_LONG,
            Fault.BROKEN_BODY,
        }
    if wire is not Wire.MULTIPART:
        ruled_out.add(Fault.FILE_UPLOADED)
    return [f for f in Fault if EXPECTED[f].check is check and f not in ruled_out]


@frozen
class FailurePlan:
    """A request and its world, with at most one fault per check of part 4.3."""

    route: Endpoint
    wire: Wire
    faults: frozenset[Fault]
    extra: Payload  # more fields, all valid
    idempotency_key: str | None
    protected: bool  # on the server route the form may be protected
    origin_list: bool
    challenge: bool
    token_in_header: bool
    cuts: tuple[int, ...]
    declare_length: bool
    prefill: int  # quota used before the request, when the quota is used up

    @property
    def first(self) -> Fault | None:
        """The fault of the earliest failing check: the one the answer must report."""
        return min(self.faults, key=lambda f: EXPECTED[f].check, default=None)

    def has(self, fault: Fault) -> bool:
        return fault in self.faults


def applies(fault: Fault, route: Endpoint, wire: Wire) -> bool:
    return fault in _faults_of(EXPECTED[fault].check, route, wire)


def lone_fault(fault: Fault | None, route: Endpoint, wire: Wire) -> FailurePlan:
    """The plainest plan with one fault (or none): an example for every fault."""
    return FailurePlan(
        route=route,
        wire=wire,
        faults=frozenset() if fault is None else frozenset({fault}),
        extra={},
        idempotency_key="invalid\n" if fault is Fault.INVALID_IDEMPOTENCY_KEY else "key-1",
        protected=False,
        origin_list=fault in (Fault.WRONG_ORIGIN, Fault.MISSING_ORIGIN),
        challenge=fault in (Fault.CHALLENGE_REJECTED, Fault.CHALLENGE_MISSING),
        token_in_header=False,
        cuts=(),
        declare_length=False,
        prefill=2,
    )


@st.composite
def failure_plans(draw: st.DrawFn) -> FailurePlan:
    route = draw(st.sampled_from(Endpoint))
    wire = draw(st.sampled_from(Wire))
    checks = [check for check in Step if _faults_of(check, route, wire)]
    # The first failing check is drawn first, so that every check is often the first;
    # any of the later checks may fail too.
    first = draw(st.sampled_from([None, *checks]))
    failing = set()
    if first is not None:
        later = [check for check in checks if check > first]
        failing = {first} | (draw(st.sets(st.sampled_from(later))) if later else set())
    faults = {draw(st.sampled_from(_faults_of(check, route, wire))) for check in failing}
    public = route is Endpoint.PUBLIC
    key = None
    if Fault.INVALID_IDEMPOTENCY_KEY in faults:
        key = draw(invalid_idempotency_keys())
    elif draw(st.booleans()):
        key = draw(idempotency_keys())
    return FailurePlan(
        route=route,
        wire=wire,
        faults=frozenset(faults),
        extra=draw(payloads(max_size=3, exclude=("name", "message", "essay", "pad"))),
        idempotency_key=key,
        protected=not public and draw(st.booleans()),
        origin_list=Fault.WRONG_ORIGIN in faults
        or Fault.MISSING_ORIGIN in faults
        or draw(st.booleans()),
        challenge=Fault.CHALLENGE_REJECTED in faults
        or Fault.CHALLENGE_MISSING in faults
        or draw(st.booleans()),
        token_in_header=draw(st.booleans()),
        cuts=tuple(draw(st.lists(st.integers(1, 4000), max_size=3))),
        declare_length=draw(st.booleans()),
        prefill=draw(st.integers(1, 3)),
    )


# ---------------------------------------------------------------------------------------
# Plans and monthly limits, for the quota


def plan_terms() -> st.SearchStrategy[PlanTerms]:
    return st.builds(PlanTerms, monthly_limit=st.integers(0, 4), overage=st.booleans())


def small_plans() -> st.SearchStrategy[dict[Plan, PlanTerms]]:
    """Plans with ceilings small enough for a short sequence to reach."""
    return st.fixed_dictionaries({plan: plan_terms() for plan in Plan})


def monthly_limits() -> st.SearchStrategy[int | None]:
    return st.one_of(st.none(), st.integers(0, 4))


# ---------------------------------------------------------------------------------------
# Hostile bodies: arbitrary bytes, and well-formed bodies holding anything


@st.composite
def mutated(draw: st.DrawFn, data: bytes) -> bytes:
    """`data` with a few bytes changed, dropped or inserted: nearly valid bodies."""
    buffer = bytearray(data)
    for _ in range(draw(st.integers(0, 3))):
        at = draw(st.integers(0, len(buffer)))
        junk = draw(st.binary(min_size=1, max_size=3))
        edit = draw(st.sampled_from(["change", "drop", "insert"]))
        if edit == "insert" or not buffer:
            buffer[at:at] = junk
        elif edit == "drop":
            del buffer[at : at + len(junk)]
        else:
            buffer[at : at + len(junk)] = junk
    return bytes(buffer)


def hostile_pairs() -> st.SearchStrategy[list[tuple[str, str]]]:
    values = st.one_of(
        st.text(max_size=30),
        st.sampled_from(["ada@example.com", "not-an-email", "https://a.example", "12", " "]),
    )
    return st.lists(st.tuples(hostile_names(), values), max_size=6)


@st.composite
def hostile_multipart(draw: st.DrawFn) -> bytes:
    """Parts with any names, file parts, per-part charsets, and bodies that may end early."""
    out = bytearray()
    for name, value in draw(hostile_pairs()):
        out += f"--{BOUNDARY}\r\n".encode("ascii")
        disposition = f'form-data; name="{name}"'
        if draw(st.booleans()):
            disposition += f'; filename="{draw(st.text(max_size=8))}"'
        out += b"Content-Disposition: " + disposition.encode("utf-8") + b"\r\n"
        charset = draw(st.none() | charsets())
        if charset is not None:
            out += f"Content-Type: text/plain; charset={charset}\r\n".encode("ascii")
        out += b"\r\n" + value.encode("utf-8") + b"\r\n"
    if draw(st.booleans()):
        out += f"--{BOUNDARY}--\r\n".encode("ascii")
    return bytes(out)


@st.composite
def hostile_bodies(draw: st.DrawFn) -> tuple[str | None, bytes]:
    """A content type and a body that may or may not be valid for it."""
    content_type = draw(content_types())
    choice = draw(st.sampled_from(["bytes", "json", "urlencoded", "multipart"]))
    if choice == "bytes":
        data = draw(st.binary(max_size=600))
    elif choice == "json":
        data = encode_json(draw(json_documents()))
        content_type = draw(st.sampled_from([JSON_TYPE, content_type]))
    elif choice == "urlencoded":
        data = encode_urlencoded(draw(hostile_pairs()))
        content_type = draw(st.sampled_from([URLENCODED_TYPE, content_type]))
    else:
        data = draw(hostile_multipart())
        content_type = draw(st.sampled_from([MULTIPART_TYPE, content_type]))
    if draw(st.booleans()):
        data = draw(mutated(data))
    return content_type, data
