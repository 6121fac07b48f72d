"""Reading a multipart/form-data body as a stream: text fields, and file parts handed on
as events."""

from __future__ import annotations

import python_multipart
from attrs import define, frozen
from python_multipart.exceptions import FormParserError
from python_multipart.multipart import parse_options_header

from intake.domain.errors import IntakeError
from intake.domain.limits import PayloadLimits
from intake.domain.model import FieldData
from intake.domain.payload.budget import Budget, add_field, malformed, too_large, utf8_len
from intake.domain.payload.content import ContentType, ParsedBody
from intake.domain.uploads import UploadPolicy, clean_file_name


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
            raise malformed()
        self._charset = content_type.charset
        self._limits = limits
        self._uploads = uploads
        self._budget = Budget(limits)
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
            raise malformed() from None  # a boundary longer than any the parser takes

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
            self._fail(malformed())
            return
        _, options = parse_options_header(disposition)
        raw_name = options.get(b"name")
        if raw_name is None:
            self._fail(malformed())
            return
        try:
            self._part.name = raw_name.decode(self._charset)
            self._budget.name(self._part.name)
        except UnicodeError:
            self._fail(malformed())
            return
        except IntakeError as error:
            self._fail(error)
            return
        if b"filename" in options:
            self._part.is_file = True
            try:
                self._part.filename = clean_file_name(options[b"filename"].decode(self._charset))
            except UnicodeError:
                self._fail(malformed())
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
            self._fail(too_large())
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
            self._fail(too_large())
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
            self._fail(too_large())
            return
        self._part.data += data[start:end]

    def _on_part_end(self) -> None:
        part = self._part
        if part.is_file:
            if not part.started:
                return  # no file name and no bytes: an empty file input
            if self._uploads is None:
                self._files.append(part.name)
                add_field(self._data, part.name, "")
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
            self._budget.text(utf8_len(value))
        except (LookupError, ValueError):  # ValueError: bad bytes, or a charset with NUL
            self._fail(malformed())
            return
        except IntakeError as error:
            self._fail(error)
            return
        add_field(self._data, part.name, value)

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
            self._fail(malformed())
        if self._error is not None:
            raise self._error

    def finish(self) -> ParsedBody:
        try:
            self._parser.finalize()
        except FormParserError:
            self._fail(malformed())
        if self._error is not None:
            raise self._error
        if not self._ended:
            raise malformed()  # the closing boundary never came
        return ParsedBody(data=self._data, file_fields=tuple(self._files))
