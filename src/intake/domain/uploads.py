"""File uploads: a form's upload policy, and the files a submission carries.

A form accepts files only when it has an `UploadPolicy`; without one a file part is a
validation_failed on its field. The bytes live in the blob store, under a key made of
the submission id and the file's position (`sub_…/0`); the submission row holds the
metadata below, and so links its files in the commit transaction.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping

from attrs import field, frozen

from intake.domain.ids import is_submission_id
from intake.domain.limits import MIB

DEFAULT_MAX_FILE_SIZE = 10 * MIB
DEFAULT_MAX_TOTAL_SIZE = 25 * MIB
DEFAULT_MAX_FILES = 10
# The ceilings an operator may raise the limits to: one request must still be received
# within the upload timeout, and the S3 store copies a blob in one request (5 GiB).
MAX_FILE_SIZE_CEILING = 1024 * MIB
MAX_FILES_CEILING = 100

# What a form accepts when uploads are turned on without a list: documents and pictures
# that a browser does not run.
DEFAULT_ALLOWED_TYPES: tuple[str, ...] = (
    "application/pdf",
    "image/jpeg",
    "image/png",
    "image/gif",
    "image/webp",
    "text/plain",
)
ANY_TYPE = "*/*"
UNKNOWN_TYPE = "application/octet-stream"
MAX_FILE_NAME = 255  # characters: a file name's limit on the usual file systems

TYPE_NOT_ACCEPTED = "This type of file is not accepted."

# RFC 6838 names, lower case: what a stored type, and so a download's header, may be.
_NAME = r"[a-z0-9][a-z0-9!#$&^_.+-]{0,126}"
_MEDIA_TYPE = re.compile(rf"{_NAME}/{_NAME}")
_TYPE_PATTERN = re.compile(rf"\*/\*|{_NAME}/(?:\*|{_NAME})")


def is_media_type(text: str) -> bool:
    """`type/subtype`, lower case: a type intake stores and serves."""
    return _MEDIA_TYPE.fullmatch(text) is not None


def _check_type_pattern(pattern: str) -> str:
    """`type/subtype`, `type/*` or `*/*`, lower case (RFC 6838 names)."""
    if not _TYPE_PATTERN.fullmatch(pattern):
        raise ValueError(f"not a MIME type or pattern: {pattern!r}")
    return pattern


def normalize_type_pattern(text: str) -> str:
    return _check_type_pattern(text.strip().lower())


def _check_types(_: object, __: object, value: tuple[str, ...]) -> None:
    if not value:
        raise ValueError("allowed_types must not be empty")
    for pattern in value:
        _check_type_pattern(pattern)


def _positive(_: object, attribute: object, value: int) -> None:
    if value < 1:
        raise ValueError(f"{getattr(attribute, 'name', 'limit')} must be at least 1")


@frozen
class UploadPolicy:
    """What one form accepts: the types (as the content says, not the sender), the size
    of one file, of all of a submission's files together, and how many files."""

    allowed_types: tuple[str, ...] = field(default=DEFAULT_ALLOWED_TYPES, validator=_check_types)
    max_file_size: int = field(default=DEFAULT_MAX_FILE_SIZE, validator=_positive)
    max_total_size: int = field(default=DEFAULT_MAX_TOTAL_SIZE, validator=_positive)
    max_files: int = field(default=DEFAULT_MAX_FILES, validator=_positive)

    def __attrs_post_init__(self) -> None:
        if self.max_file_size > MAX_FILE_SIZE_CEILING or self.max_total_size > (
            MAX_FILE_SIZE_CEILING
        ):
            raise ValueError(f"upload size limits are at most {MAX_FILE_SIZE_CEILING} bytes")
        if self.max_files > MAX_FILES_CEILING:
            raise ValueError(f"max_files is at most {MAX_FILES_CEILING}")

    def allows(self, content_type: str) -> bool:
        major = content_type.partition("/")[0]
        return any(
            pattern in (ANY_TYPE, content_type, f"{major}/*") for pattern in self.allowed_types
        )

    def to_json(self) -> dict[str, object]:
        return {
            "allowed_types": list(self.allowed_types),
            "max_file_size": self.max_file_size,
            "max_total_size": self.max_total_size,
            "max_files": self.max_files,
        }

    @classmethod
    def from_json(cls, value: Mapping[str, object]) -> UploadPolicy:
        types = value.get("allowed_types", DEFAULT_ALLOWED_TYPES)
        assert isinstance(types, list | tuple)
        return cls(
            allowed_types=tuple(str(item) for item in types),
            max_file_size=int(str(value.get("max_file_size", DEFAULT_MAX_FILE_SIZE))),
            max_total_size=int(str(value.get("max_total_size", DEFAULT_MAX_TOTAL_SIZE))),
            max_files=int(str(value.get("max_files", DEFAULT_MAX_FILES))),
        )


@frozen
class StoredFile:
    """One uploaded file of a submission, as its row keeps it."""

    field: str  # the form field it was sent in
    name: str  # the file name the sender gave, cleaned (see `clean_file_name`)
    size: int
    content_type: str  # as sniffed from the content
    sha256: str  # hex
    key: str  # in the blob store

    def to_json(self) -> dict[str, object]:
        return {
            "field": self.field,
            "name": self.name,
            "size": self.size,
            "type": self.content_type,
            "sha256": self.sha256,
            "key": self.key,
        }

    @classmethod
    def from_json(cls, value: Mapping[str, object]) -> StoredFile:
        size = value["size"]
        assert isinstance(size, int)
        return cls(
            field=str(value["field"]),
            name=str(value["name"]),
            size=size,
            content_type=str(value["type"]),
            sha256=str(value["sha256"]),
            key=str(value["key"]),
        )

    def describe(self, url: str | None, expires_at: str | None = None) -> dict[str, object]:
        """The file as an event, a webhook or an export tells of it."""
        entry: dict[str, object] = {
            "field": self.field,
            "name": self.name,
            "size": self.size,
            "type": self.content_type,
            "sha256": self.sha256,
            "digest": f"sha256:{self.sha256}",
        }
        if url is not None:
            entry["url"] = url
            entry["url_expires_at"] = expires_at
        return entry


def files_to_json(files: Iterable[StoredFile]) -> list[dict[str, object]]:
    return [item.to_json() for item in files]


def files_from_json(value: object) -> tuple[StoredFile, ...]:
    if not value:
        return ()
    assert isinstance(value, list)
    return tuple(StoredFile.from_json(item) for item in value)


def file_key(submission_id: str, index: int) -> str:
    return f"{submission_id}/{index}"


def submission_of_key(key: str) -> str | None:
    """The submission a blob key belongs to, None for a key intake did not make."""
    submission_id, slash, index = key.partition("/")
    if (
        not slash
        or not (index.isascii() and index.isdigit())
        or not is_submission_id(submission_id)
    ):
        return None
    return submission_id


def clean_file_name(raw: str) -> str:
    """The name a sender gave, as it may be shown and offered back for download: the last
    path segment (old browsers send the whole path), no control or format characters,
    NFC, at most 255 characters; `file` when nothing is left."""
    name = raw.replace("\\", "/").rsplit("/", 1)[-1]
    name = unicodedata.normalize("NFC", name)
    # Control and format characters (C*), and the line and paragraph separators.
    name = "".join(
        ch for ch in name if unicodedata.category(ch)[0] != "C" and ch not in "\u2028\u2029"
    )
    name = name.strip()[:MAX_FILE_NAME].strip()
    if name in ("", ".", ".."):
        return "file"
    return name
