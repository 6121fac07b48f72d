"""The fuzz targets: each takes raw bytes, runs one parser and asserts its invariants.

Nothing here imports atheris, so the seed corpus replays under plain pytest and a crash's
reproducer can be run and debugged without the fuzzer (`tests/fuzz/harness.py` wraps
these for libFuzzer).

The body targets read their input as `<Content-Type header>\\n<body>`, so that the seeds
stay readable and the fuzzer mutates the type, its charset and the boundary along with
the body. The limits are small, so that inputs of a few KiB reach every one of them.

The only exception a target may let out is an `IntakeError` whose code the step may
answer with; anything else, or a broken invariant (an AssertionError), is a crash.
"""

from __future__ import annotations

import codecs
import json
import random
import zlib
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager

from intake.domain.controls import (
    CHALLENGE_TOKEN_FIELDS,
    HONEYPOT,
    NEXT,
    REPLY_TO,
    SUBJECT,
    Controls,
    is_control,
    split_controls,
)
from intake.domain.errors import ErrorCode, IntakeError
from intake.domain.limits import PayloadLimits
from intake.domain.model import FieldData, FieldValue
from intake.domain.payload import (
    ContentKind,
    ContentType,
    FileEnd,
    FileStart,
    MultipartReader,
    ParsedBody,
    parse_content_type,
    parse_json,
    parse_urlencoded,
)
from intake.domain.uploads import UploadPolicy

LIMITS = PayloadLimits(
    max_body=2048,
    max_fields=8,
    max_name=16,
    max_value=96,
    max_total=384,
    max_depth=3,
    max_multipart_body=4096,
)
# Longest input libFuzzer generates: room for every limit above to be passed.
MAX_LEN = 4096

BODY_CODES = frozenset({ErrorCode.MALFORMED_REQUEST, ErrorCode.PAYLOAD_TOO_LARGE})
TYPE_CODES = frozenset({ErrorCode.UNSUPPORTED_CONTENT_TYPE})


class Refused(Exception):  # noqa: N818 - an outcome, not a programming error
    """A refusal with a code the step may answer with: the end of a valid run."""


@contextmanager
def _refusals(allowed: frozenset[ErrorCode]) -> Iterator[None]:
    try:
        yield
    except IntakeError as error:
        code = error.rejection.code
        assert code in allowed, f"refused with {code.value}, not one of the step's codes"
        raise Refused(code.value) from None


def _split(data: bytes, default_type: str) -> tuple[str, bytes]:
    head, newline, body = data.partition(b"\n")
    if not newline:
        return default_type, data
    # A header reaches the app as latin-1 text, whatever its bytes.
    return head.decode("latin-1"), body


def _content_type(header: str) -> ContentType:
    with _refusals(TYPE_CODES):
        content_type = parse_content_type(header)
    assert isinstance(content_type.kind, ContentKind)
    # The charset it keeps must be a text encoding the parsers can decode with.
    assert codecs.lookup(content_type.charset)._is_text_encoding, content_type.charset
    return content_type


# -- invariants of a parsed body ---------------------------------------------------------


def _utf8(text: str, what: str) -> int:
    assert "\x00" not in text, f"a {what} holds NUL"
    try:
        return len(text.encode("utf-8"))
    except UnicodeEncodeError:
        raise AssertionError(f"a {what} holds a lone surrogate") from None


def _check_form_fields(parsed: ParsedBody, limits: PayloadLimits) -> None:
    """urlencoded and multipart: text values, a repeated name as a list, every limit."""
    fields = 0
    total = 0
    for name, value in parsed.data.items():
        assert isinstance(name, str)
        assert _utf8(name, "name") <= limits.max_name, "a name over the limit was kept"
        values = value if isinstance(value, list) else [value]
        assert len(values) >= 1
        for item in values:
            assert isinstance(item, str), f"a form value of type {type(item).__name__}"
            size = _utf8(item, "value")
            assert size <= limits.max_value, "a value over the limit was kept"
            total += size
        fields += len(values)
    assert fields <= limits.max_fields, f"{fields} fields kept, over the limit"
    assert total <= limits.max_total, f"{total} bytes of text kept, over the limit"
    for name in parsed.file_fields:
        assert name in parsed.data, "a file part's name is not among the fields"


def _json_depth(value: FieldValue) -> int:
    """decisions.md: objects count as levels; an array of scalars is a repeated name and
    adds none; an array holding objects or arrays counts as a level."""
    if isinstance(value, dict):
        return 1 + max((_json_depth(item) for item in value.values()), default=0)
    if isinstance(value, list):
        if not any(isinstance(item, dict | list) for item in value):
            return 0
        return 1 + max(_json_depth(item) for item in value)
    return 0


class _Tally:
    def __init__(self) -> None:
        self.fields = 0
        self.total = 0


def _walk_json(value: FieldValue, limits: PayloadLimits, tally: _Tally) -> None:
    """Every name received counts as a field, and so does each further value of an array;
    a number, boolean or null counts its JSON text."""
    if isinstance(value, dict):
        for key, item in value.items():
            assert _utf8(key, "name") <= limits.max_name, "a name over the limit was kept"
            tally.fields += 1
            _walk_json(item, limits, tally)
    elif isinstance(value, list):
        tally.fields += max(0, len(value) - 1)
        for item in value:
            _walk_json(item, limits, tally)
    else:
        size = _utf8(value, "value") if isinstance(value, str) else len(json.dumps(value))
        assert size <= limits.max_value, "a value over the limit was kept"
        tally.total += size


def _check_json(parsed: ParsedBody, limits: PayloadLimits) -> None:
    assert isinstance(parsed.data, dict), "a JSON body that is not an object was kept"
    assert _json_depth(parsed.data) <= limits.max_depth, "a document over the depth limit"
    tally = _Tally()
    _walk_json(parsed.data, limits, tally)
    assert tally.fields <= limits.max_fields, f"{tally.fields} fields kept, over the limit"
    assert tally.total <= limits.max_total, f"{tally.total} bytes of text kept, over the limit"
    assert parsed.file_fields == ()


# -- the targets ---------------------------------------------------------------------------


def content_type(data: bytes) -> None:
    """The Content-Type header: one of the three types with a usable charset, or 415."""
    for header in (data.decode("latin-1"), data.decode("utf-8", "surrogateescape")):
        try:
            _content_type(header)
        except Refused:
            continue


def urlencoded(data: bytes) -> None:
    header, body = _split(data, "application/x-www-form-urlencoded")
    try:
        charset = _content_type(header)
        with _refusals(BODY_CODES):
            parsed = parse_urlencoded(body, charset, LIMITS)
    except Refused:
        return
    _check_form_fields(parsed, LIMITS)
    assert parsed.file_fields == ()


def json_body(data: bytes) -> None:
    header, body = _split(data, "application/json")
    try:
        charset = _content_type(header)
        with _refusals(BODY_CODES):
            parsed = parse_json(body, charset, LIMITS)
    except Refused:
        return
    _check_json(parsed, LIMITS)


Outcome = tuple[str, object]


def _read_multipart(content_type: ContentType, chunks: list[bytes]) -> Outcome:
    try:
        with _refusals(BODY_CODES):
            reader = MultipartReader(content_type, LIMITS)
            for chunk in chunks:
                reader.feed(chunk)
            parsed = reader.finish()
    except Refused as refused:
        return "refused", str(refused)
    _check_form_fields(parsed, LIMITS)
    return "parsed", (parsed.data, parsed.file_fields)


def _cuts(body: bytes, seed: int) -> list[bytes]:
    """The body in pieces of any size, down to single bytes; the same input always makes
    the same pieces, so that a reproducer reproduces."""
    chooser = random.Random(seed)  # picks split points, not secrets
    pieces = []
    start = 0
    while start < len(body):
        size = chooser.choice((1, 2, 3, chooser.randint(1, 64), chooser.randint(1, 1024)))
        pieces.append(body[start : start + size])
        start += size
    return pieces


def _same_in_pieces(data: bytes, read: Callable[[ContentType, list[bytes]], Outcome]) -> None:
    """The outcome of a body fed whole is the outcome of the same body fed in pieces."""
    header, body = _split(data, "multipart/form-data; boundary=b")
    try:
        content_type_ = _content_type(header)
    except Refused:
        return
    whole = read(content_type_, [body])
    pieces = read(content_type_, _cuts(body, zlib.crc32(data)))
    assert whole == pieces, f"fed whole: {whole!r}; fed in pieces: {pieces!r}"


def multipart(data: bytes) -> None:
    """The streaming reader: the outcome of a body fed whole is the outcome of the same
    body fed in any pieces."""
    _same_in_pieces(data, _read_multipart)


# A policy small enough that the fuzzer reaches every one of its limits.
UPLOADS = UploadPolicy(max_file_size=64, max_total_size=128, max_files=3)


def _read_uploads(content_type: ContentType, chunks: list[bytes]) -> Outcome:
    """The parse of a body to a form that takes files, with its files rebuilt from the
    reader's events: (field, file name, declared type, content) each."""
    files: list[tuple[str, str, str | None, bytes]] = []
    current: FileStart | None = None
    content = bytearray()
    try:
        with _refusals(BODY_CODES):
            reader = MultipartReader(content_type, LIMITS, UPLOADS)
            for chunk in chunks:
                reader.feed(chunk)
                for event in reader.take_file_events():
                    if isinstance(event, FileStart):
                        assert current is None, "a file began inside another"
                        current, content = event, bytearray()
                    elif isinstance(event, FileEnd):
                        assert current is not None, "a file ended that never began"
                        files.append(
                            (current.field, current.filename, current.declared_type, bytes(content))
                        )
                        current = None
                    else:
                        assert current is not None, "file bytes outside a file"
                        content += event
            parsed = reader.finish()
            assert not reader.take_file_events(), "events after the end"
    except Refused as refused:
        return "refused", str(refused)
    assert current is None, "a file never ended"
    assert len(files) <= UPLOADS.max_files
    assert all(len(item[3]) <= UPLOADS.max_file_size for item in files)
    assert sum(len(item[3]) for item in files) <= UPLOADS.max_total_size
    assert not any(item[0].startswith("_") for item in files), "a control name was kept"
    assert parsed.file_fields == (), "a form that takes files refused one as a field"
    _check_form_fields(parsed, LIMITS)
    return "parsed", (parsed.data, files)


def multipart_uploads(data: bytes) -> None:
    """The reader on a form that takes files: the files it hands on keep the policy's
    limits, and fed in any pieces it hands on the same files as fed whole."""
    _same_in_pieces(data, _read_uploads)


_FORM = parse_content_type("application/x-www-form-urlencoded")


def _controls_input(data: bytes) -> FieldData | None:
    """A JSON object when the input starts with `{`, else a urlencoded body."""
    if data[:1] == b"{":
        try:
            document = json.loads(data)
        except (ValueError, RecursionError):
            return None
        return document if isinstance(document, dict) else None
    try:
        return parse_urlencoded(data, _FORM, PayloadLimits()).data
    except IntakeError:
        return None


def _first_text(value: FieldValue) -> str:
    """decisions.md: a control sent several times keeps its first value; a JSON value
    that is not a string is read as its JSON text; null is empty."""
    if isinstance(value, list):
        return _first_text(value[0]) if value else ""
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value)


def _trimmed(fields: Mapping[str, FieldValue], name: str) -> str | None:
    if name not in fields:
        return None
    return _first_text(fields[name]).strip() or None


def controls(data: bytes) -> None:
    """The control-field split: no control name is ever kept as data, nothing is lost
    (the data and the control fields re-joined are what was sent), and the controls'
    values are the ones decisions.md describes."""
    fields = _controls_input(data)
    if fields is None:
        return
    kept, found = split_controls(fields)

    for name in kept:
        assert not name.startswith("_"), f"control field {name!r} kept as data"
        assert name not in CHALLENGE_TOKEN_FIELDS, f"challenge field {name!r} kept as data"
        assert kept[name] is fields[name], f"the value of {name!r} was changed"
    assert list(kept) == [name for name in fields if name in kept], "the order changed"
    rejoined = {**kept, **{name: value for name, value in fields.items() if is_control(name)}}
    assert rejoined == fields, "splitting and re-joining lost a field"
    assert set(rejoined) == set(fields)

    assert found.honeypot is (HONEYPOT in fields and _first_text(fields[HONEYPOT]) != "")
    assert found.next_url == _trimmed(fields, NEXT)
    assert found.subject == _trimmed(fields, SUBJECT)
    assert found.reply_to == _trimmed(fields, REPLY_TO)
    tokens = [_first_text(fields[n]) for n in fields if n in CHALLENGE_TOKEN_FIELDS]
    assert found.challenge_token == next((t for t in tokens if t), None)

    assert split_controls(kept) == (kept, Controls()), "a second split found more controls"


TARGETS: Mapping[str, Callable[[bytes], None]] = {
    "content_type": content_type,
    "urlencoded": urlencoded,
    "json": json_body,
    "multipart": multipart,
    "multipart_uploads": multipart_uploads,
    "controls": controls,
}
