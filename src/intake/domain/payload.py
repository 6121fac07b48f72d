"""Reading a submission body into named fields: the three content types and their limits.

Pure: the caller feeds bytes in. Every refusal is an `IntakeError` with the spec's code.
"""

from __future__ import annotations

import codecs
import enum
import json
import math
from urllib.parse import unquote_plus

import python_multipart
from attrs import define, frozen
from python_multipart.exceptions import FormParserError
from python_multipart.multipart import parse_options_header

from intake.domain.errors import ErrorCode, IntakeError
from intake.domain.limits import PayloadLimits
from intake.domain.model import FieldData, FieldValue
from intake.domain.uploads import UploadPolicy, clean_file_name


class ContentKind(enum.Enum):
    URLENCODED = "application/x-www-form-urlencoded"
    MULTIPART = "multipart/form-data"
    JSON = "application/json"


@frozen
class ContentType:
    kind: ContentKind
    charset: str
    boundary: bytes | None = None


@frozen
class ParsedBody:
    """Fields in wire order, before the control-field split. `file_fields`: the fields
    that carried a file to a form that takes none."""

    data: FieldData
    file_fields: tuple[str, ...] = ()


@frozen
class FileStart:
    """A file part begins, on a form that takes uploads; its bytes follow as `bytes`
    events, then a `FileEnd`."""

    field: str
    filename: str  # cleaned: see clean_file_name
    declared_type: str | None


@frozen
class FileEnd:
    pass


FileEvent = FileStart | bytes | FileEnd


def _too_large() -> IntakeError:
    return IntakeError.of(ErrorCode.PAYLOAD_TOO_LARGE)


def _malformed() -> IntakeError:
    return IntakeError.of(ErrorCode.MALFORMED_REQUEST)


def parse_content_type(header: str | None) -> ContentType:
    if not header:
        raise IntakeError.of(ErrorCode.UNSUPPORTED_CONTENT_TYPE)
    try:
        mime, options = parse_options_header(header)
    except UnicodeEncodeError:
        # Starlette hands headers over as latin-1 text; anything else cannot be a type.
        raise IntakeError.of(ErrorCode.UNSUPPORTED_CONTENT_TYPE) from None
    try:
        kind = ContentKind(mime.decode("latin-1").strip().lower())
    except ValueError:
        raise IntakeError.of(ErrorCode.UNSUPPORTED_CONTENT_TYPE) from None
    raw_charset = options.get(b"charset", b"utf-8").decode("latin-1") or "utf-8"
    try:
        codec = codecs.lookup(raw_charset)
    except (LookupError, ValueError):
        # A charset intake cannot read is a content type it does not support (step 5);
        # a name holding NUL is a ValueError, not a LookupError.
        raise IntakeError.of(ErrorCode.UNSUPPORTED_CONTENT_TYPE) from None
    # `base64` and `rot13` are codecs but not text encodings; `bytes.decode` refuses them
    # by this same flag, so it is checked here, before any callback meets it.
    if not codec._is_text_encoding:
        raise IntakeError.of(ErrorCode.UNSUPPORTED_CONTENT_TYPE)
    # A multipart type without a boundary is a body that cannot be read: the reader
    # refuses it when parsing starts (step 6).
    return ContentType(kind=kind, charset=codec.name, boundary=options.get(b"boundary"))


def _decode(raw: bytes, charset: str) -> str:
    try:
        return raw.decode(charset)
    except (UnicodeError, LookupError):
        raise _malformed() from None


class _Budget:
    """Counts fields and text against the limits as they are read."""

    __slots__ = ("fields", "limits", "total")

    def __init__(self, limits: PayloadLimits) -> None:
        self.limits = limits
        self.fields = 0
        self.total = 0

    def name(self, name: str) -> None:
        self.fields += 1
        if self.fields > self.limits.max_fields:
            raise _too_large()
        if _utf8_len(name) > self.limits.max_name:
            raise _too_large()

    def text(self, size: int) -> None:
        if size > self.limits.max_value:
            raise _too_large()
        self.total += size
        if self.total > self.limits.max_total:
            raise _too_large()


def _utf8_len(value: str) -> int:
    """The UTF-8 size of a name or value, refusing what no form field holds: NUL, which
    PostgreSQL cannot store either, and lone surrogates."""
    if "\x00" in value:
        raise _malformed()
    # ASCII is the common case; len() is exact there and far cheaper than encoding.
    if value.isascii():
        return len(value)
    try:
        return len(value.encode("utf-8"))
    except UnicodeEncodeError:
        # A lone surrogate, which only a JSON `\ud800` escape can produce: not text.
        raise _malformed() from None


def _add(data: FieldData, name: str, value: FieldValue) -> None:
    """A repeated name keeps every value, in order."""
    if name not in data:
        data[name] = value
        return
    existing = data[name]
    if isinstance(existing, list):
        existing.append(value)
    else:
        data[name] = [existing, value]


def parse_urlencoded(body: bytes, content_type: ContentType, limits: PayloadLimits) -> ParsedBody:
    text = _decode(body, content_type.charset)
    budget = _Budget(limits)
    data: FieldData = {}
    for pair in text.split("&"):
        if not pair:
            continue
        raw_name, _, raw_value = pair.partition("=")
        try:
            name = unquote_plus(raw_name, encoding=content_type.charset, errors="strict")
            value = unquote_plus(raw_value, encoding=content_type.charset, errors="strict")
        except UnicodeError:
            raise _malformed() from None
        budget.name(name)
        budget.text(_utf8_len(value))
        _add(data, name, value)
    return ParsedBody(data=data)


def _reject_constant(_: str) -> float:
    raise ValueError("NaN and Infinity are not JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError("a number too large for a double, such as 1e400, is refused")
    return value


def _measure_json(value: FieldValue, budget: _Budget, nesting: int) -> int:
    """Checks the limits on one JSON value and returns its depth: objects count, and so
    do arrays that hold containers; an array of scalars is a repeated name, not a level.
    `nesting` is how many containers enclose the value; it stops runaway recursion early,
    since nothing within the depth limit nests more than max_depth + 1 containers."""
    if isinstance(value, dict):
        if nesting > budget.limits.max_depth:
            raise _too_large()
        deepest = 0
        for key, item in value.items():
            budget.name(key)
            deepest = max(deepest, _measure_json(item, budget, nesting + 1))
        return 1 + deepest
    if isinstance(value, list):
        if nesting > budget.limits.max_depth:
            raise _too_large()
        deepest = 0
        for index, item in enumerate(value):
            if index:
                budget.fields += 1  # each further value of a name counts as a field received
                if budget.fields > budget.limits.max_fields:
                    raise _too_large()
            deepest = max(deepest, _measure_json(item, budget, nesting + 1))
        return 1 + deepest if deepest else 0
    if isinstance(value, str):
        budget.text(_utf8_len(value))
    else:
        budget.text(len(json.dumps(value)))
    return 0


def parse_json(body: bytes, content_type: ContentType, limits: PayloadLimits) -> ParsedBody:
    text = _decode(body, content_type.charset)
    try:
        document = json.loads(text, parse_constant=_reject_constant, parse_float=_finite_float)
    except RecursionError:
        raise _too_large() from None  # nested far past the depth limit
    except ValueError:
        raise _malformed() from None
    if not isinstance(document, dict):
        raise _malformed()
    budget = _Budget(limits)
    if _measure_json(document, budget, 0) > limits.max_depth:
        raise _too_large()
    return ParsedBody(data=document)


@define
class _Part:
    headers: dict[bytes, bytes]
    name: str = ""
    is_file: bool = False
    data: bytearray | None = None
    filename: str = ""
    size: int = 0  # a file part's bytes so far
    started: bool = False  # a FileStart was emitted for it


class MultipartReader:
    """Feeds a multipart body through a streaming parser. Text parts count against the
    limits, and their bytes against the body limit. File parts: on a form without an
    upload policy they are noted by name and their bytes discarded; with one, they count
    against its limits and are handed on as `FileEvent`s (`take_file_events`), which the
    caller streams to storage between feeds. A file part with no file name and no bytes
    is what a browser sends for an empty file input: no file, and no field."""

    def __init__(
        self,
        content_type: ContentType,
        limits: PayloadLimits,
        uploads: UploadPolicy | None = None,
    ) -> None:
        if not content_type.boundary:
            raise _malformed()
        self._charset = content_type.charset
        self._limits = limits
        self._uploads = uploads
        self._budget = _Budget(limits)
        self._data: FieldData = {}
        self._files: list[str] = []
        self._events: list[FileEvent] = []
        self._file_count = 0
        self._file_bytes = 0
        self._text_bytes = 0
        self._part = _Part(headers={})
        self._header_name = b""
        self._header_value = b""
        self._ended = False
        self._error: IntakeError | None = None
        # RFC 2046: what comes before the first delimiter is a preamble, to be ignored.
        # The reader skips it itself: the parser skips only blank lines there, and how
        # much else it skips depends on where the body was split into chunks.
        self._delimiter = b"--" + content_type.boundary
        self._preamble_tail: bytes | None = b""  # None once the first delimiter is found
        try:
            self._parser = python_multipart.MultipartParser(
                content_type.boundary,
                {
                    "on_part_begin": self._on_part_begin,
                    "on_part_data": self._on_part_data,
                    "on_part_end": self._on_part_end,
                    "on_header_field": self._on_header_field,
                    "on_header_value": self._on_header_value,
                    "on_header_end": self._on_header_end,
                    "on_headers_finished": self._on_headers_finished,
                    "on_end": self._on_end,
                },
            )
        except FormParserError:
            raise _malformed() from None  # a boundary longer than any the parser takes

    # The parser's callbacks cannot raise through it cleanly, so they record the first
    # refusal and the reader raises it after the write returns.
    def _fail(self, error: IntakeError) -> None:
        if self._error is None:
            self._error = error

    def _on_part_begin(self) -> None:
        self._part = _Part(headers={})

    def _on_header_field(self, data: bytes, start: int, end: int) -> None:
        self._header_name += data[start:end]

    def _on_header_value(self, data: bytes, start: int, end: int) -> None:
        self._header_value += data[start:end]

    def _on_header_end(self) -> None:
        self._part.headers[self._header_name.lower()] = self._header_value
        self._header_name = b""
        self._header_value = b""

    def _on_headers_finished(self) -> None:
        disposition = self._part.headers.get(b"content-disposition")
        if disposition is None:
            self._fail(_malformed())
            return
        _, options = parse_options_header(disposition)
        raw_name = options.get(b"name")
        if raw_name is None:
            self._fail(_malformed())
            return
        try:
            self._part.name = raw_name.decode(self._charset)
            self._budget.name(self._part.name)
        except UnicodeError:
            self._fail(_malformed())
            return
        except IntakeError as error:
            self._fail(error)
            return
        if b"filename" in options:
            self._part.is_file = True
            try:
                self._part.filename = clean_file_name(options[b"filename"].decode(self._charset))
            except UnicodeError:
                self._fail(_malformed())
                return
            if options[b"filename"]:
                self._start_file()
        else:
            self._part.data = bytearray()

    def _start_file(self) -> None:
        """Counts a file against the policy and announces it (a named part at once, an
        unnamed one at its first byte)."""
        part = self._part
        part.started = True
        if self._uploads is None:
            return
        self._file_count += 1
        if self._file_count > self._uploads.max_files:
            self._fail(_too_large())
            return
        if part.name.startswith("_"):
            return  # a control name: never stored, so its bytes are only counted
        declared = part.headers.get(b"content-type")
        self._events.append(
            FileStart(
                field=part.name,
                filename=part.filename,
                declared_type=declared.decode("latin-1") if declared else None,
            )
        )

    def _file_data(self, data: bytes, start: int, end: int) -> None:
        part = self._part
        if not part.started:
            self._start_file()
        size = end - start
        part.size += size
        uploads = self._uploads
        if uploads is None:
            return  # a form that takes no files: the bytes are not kept
        self._file_bytes += size
        if part.size > uploads.max_file_size or self._file_bytes > uploads.max_total_size:
            self._fail(_too_large())
            return
        if not part.name.startswith("_"):
            self._events.append(data[start:end])

    def take_file_events(self) -> list[FileEvent]:
        """The file events since the last call, in order."""
        events, self._events = self._events, []
        return events

    def _on_part_data(self, data: bytes, start: int, end: int) -> None:
        if self._error is not None:
            return
        if self._part.data is None:
            if self._part.is_file:
                self._file_data(data, start, end)
            return
        size = end - start
        self._text_bytes += size
        if self._text_bytes > self._limits.max_body or len(self._part.data) + size > (
            self._limits.max_value
        ):
            self._fail(_too_large())
            return
        self._part.data += data[start:end]

    def _on_part_end(self) -> None:
        part = self._part
        if part.is_file:
            if not part.started:
                return  # no file name and no bytes: an empty file input
            if self._uploads is None:
                self._files.append(part.name)
                _add(self._data, part.name, "")
            elif not part.name.startswith("_"):
                self._events.append(FileEnd())
            return
        if part.data is None:
            return
        charset = self._charset
        part_type = part.headers.get(b"content-type")
        if part_type is not None:
            _, options = parse_options_header(part_type)
            if b"charset" in options:
                charset = options[b"charset"].decode("latin-1")
        try:
            value = bytes(part.data).decode(charset)
            self._budget.text(_utf8_len(value))
        except (LookupError, ValueError):  # ValueError: bad bytes, or a charset with NUL
            self._fail(_malformed())
            return
        except IntakeError as error:
            self._fail(error)
            return
        _add(self._data, part.name, value)

    def _on_end(self) -> None:
        self._ended = True

    def _past_preamble(self, chunk: bytes) -> bytes:
        """The part of `chunk` from the first delimiter on; until one is found, only the
        bytes that could begin a delimiter split across chunks are kept."""
        if self._preamble_tail is None:
            return chunk
        pending = self._preamble_tail + chunk
        at = pending.find(self._delimiter)
        if at < 0:
            self._preamble_tail = pending[max(0, len(pending) - len(self._delimiter) + 1) :]
            return b""
        self._preamble_tail = None
        return pending[at:]

    def feed(self, chunk: bytes) -> None:
        chunk = self._past_preamble(chunk)
        if not chunk:
            return
        try:
            self._parser.write(chunk)
        except FormParserError:
            self._fail(_malformed())
        if self._error is not None:
            raise self._error

    def finish(self) -> ParsedBody:
        try:
            self._parser.finalize()
        except FormParserError:
            self._fail(_malformed())
        if self._error is not None:
            raise self._error
        if not self._ended:
            raise _malformed()  # the closing boundary never came
        return ParsedBody(data=self._data, file_fields=tuple(self._files))


def parse_complete(body: bytes, content_type: ContentType, limits: PayloadLimits) -> ParsedBody:
    """Parses a body that is already read whole (the size limit checked by the reader)."""
    if content_type.kind is ContentKind.URLENCODED:
        return parse_urlencoded(body, content_type, limits)
    if content_type.kind is ContentKind.JSON:
        return parse_json(body, content_type, limits)
    reader = MultipartReader(content_type, limits)
    reader.feed(body)
    return reader.finish()


def check_fields(data: FieldData, limits: PayloadLimits) -> ParsedBody:
    """Applies the limits to fields handed over in-process rather than as a body."""
    budget = _Budget(limits)
    deepest = 0
    for name, value in data.items():
        budget.name(name)
        deepest = max(deepest, _measure_json(value, budget, 1))
    if 1 + deepest > limits.max_depth:
        raise _too_large()
    return ParsedBody(data=data)
