"""A form's upload policy, the names and keys of stored files, and the two places files
meet the rest of the domain: validation and the idempotency fingerprint."""

from __future__ import annotations

import hashlib
import json
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from intake.domain import ids
from intake.domain.idempotency import fingerprint
from intake.domain.limits import MIB
from intake.domain.model import FieldData, FieldRule, RuleKind
from intake.domain.uploads import (
    DEFAULT_ALLOWED_TYPES,
    MAX_FILE_NAME,
    MAX_FILE_SIZE_CEILING,
    MAX_FILES_CEILING,
    TYPE_NOT_ACCEPTED,
    StoredFile,
    UploadPolicy,
    clean_file_name,
    file_key,
    files_from_json,
    files_to_json,
    normalize_type_pattern,
    submission_of_key,
)
from intake.domain.validation import FILE_NOT_ACCEPTED, MESSAGES, validate

SUBMISSION_ID = ids.submission_id(1_768_478_400_000, bytes(range(12)))

# --- the policy ----------------------------------------------------------------------


def test_the_defaults_take_documents_and_pictures_within_the_documented_sizes() -> None:
    policy = UploadPolicy()

    assert policy.allowed_types == (
        "application/pdf",
        "image/jpeg",
        "image/png",
        "image/gif",
        "image/webp",
        "text/plain",
    )
    assert policy.max_file_size == 10 * MIB
    assert policy.max_total_size == 25 * MIB
    assert policy.max_files == 10


@pytest.mark.parametrize(
    "pattern",
    ["application/pdf", "image/*", "*/*", "application/vnd.ms-excel", "text/x-c++", "a/b"],
)
def test_a_type_or_a_pattern_is_accepted(pattern: str) -> None:
    assert UploadPolicy(allowed_types=(pattern,)).allowed_types == (pattern,)


@pytest.mark.parametrize(
    "pattern",
    [
        "",
        "pdf",
        "image/",
        "/png",
        "*/png",
        "*",
        "**/*",
        "image/**",
        "Image/PNG",  # stored lower case: normalize_type_pattern lowers what operators type
        "image/png; q=1",
        "image /png",
        " image/png",
        "image/png/x",
        "image/.png",
        "imagé/png",
        "text/" + "x" * 128,
    ],
)
def test_anything_else_is_not_a_type_pattern(pattern: str) -> None:
    with pytest.raises(ValueError, match="MIME type"):
        UploadPolicy(allowed_types=(pattern,))


def test_a_policy_takes_at_least_one_type() -> None:
    with pytest.raises(ValueError, match="empty"):
        UploadPolicy(allowed_types=())


def test_normalizing_lowers_and_trims_what_an_operator_typed() -> None:
    assert normalize_type_pattern("  Image/PNG ") == "image/png"
    assert normalize_type_pattern("*/*") == "*/*"
    with pytest.raises(ValueError, match="MIME type"):
        normalize_type_pattern("image png")


@pytest.mark.parametrize("limit", ["max_file_size", "max_total_size", "max_files"])
@pytest.mark.parametrize("value", [0, -1])
def test_every_limit_is_at_least_one(limit: str, value: int) -> None:
    with pytest.raises(ValueError, match=f"{limit} must be at least 1"):
        UploadPolicy(**{limit: value})  # type: ignore[arg-type]


@pytest.mark.parametrize("limit", ["max_file_size", "max_total_size"])
def test_the_sizes_stop_at_their_ceiling(limit: str) -> None:
    at_ceiling = UploadPolicy(**{limit: MAX_FILE_SIZE_CEILING})  # type: ignore[arg-type]

    assert getattr(at_ceiling, limit) == MAX_FILE_SIZE_CEILING
    with pytest.raises(ValueError, match="at most"):
        UploadPolicy(**{limit: MAX_FILE_SIZE_CEILING + 1})  # type: ignore[arg-type]


def test_the_number_of_files_stops_at_its_ceiling() -> None:
    assert UploadPolicy(max_files=MAX_FILES_CEILING).max_files == MAX_FILES_CEILING
    with pytest.raises(ValueError, match="max_files is at most"):
        UploadPolicy(max_files=MAX_FILES_CEILING + 1)


def test_an_exact_type_allows_that_type_only() -> None:
    policy = UploadPolicy(allowed_types=("image/png",))

    assert policy.allows("image/png")
    assert not policy.allows("image/jpeg")
    assert not policy.allows("image/pngx")
    assert not policy.allows("application/png")


def test_a_major_type_pattern_allows_its_subtypes_only() -> None:
    policy = UploadPolicy(allowed_types=("image/*",))

    assert policy.allows("image/png")
    assert policy.allows("image/webp")
    assert not policy.allows("imagex/png")
    assert not policy.allows("application/pdf")
    assert not policy.allows("text/image")


def test_any_type_allows_everything_even_the_unknown() -> None:
    policy = UploadPolicy(allowed_types=("*/*",))

    for content_type in ("application/octet-stream", "text/html", "image/png"):
        assert policy.allows(content_type)


def test_the_default_policy_refuses_what_a_browser_would_run() -> None:
    policy = UploadPolicy()

    for content_type in DEFAULT_ALLOWED_TYPES:
        assert policy.allows(content_type)
    for content_type in ("text/html", "image/svg+xml", "application/octet-stream"):
        assert not policy.allows(content_type)


_patterns = st.sampled_from(
    ["application/pdf", "image/*", "*/*", "text/plain", "text/csv", "application/zip"]
)


@given(
    st.builds(
        UploadPolicy,
        allowed_types=st.lists(_patterns, min_size=1, max_size=4).map(tuple),
        max_file_size=st.integers(1, MAX_FILE_SIZE_CEILING),
        max_total_size=st.integers(1, MAX_FILE_SIZE_CEILING),
        max_files=st.integers(1, MAX_FILES_CEILING),
    )
)
def test_a_policy_survives_its_json_form(policy: UploadPolicy) -> None:
    stored = json.loads(json.dumps(policy.to_json()))

    assert UploadPolicy.from_json(stored) == policy


def test_the_json_form_names_every_setting() -> None:
    assert UploadPolicy(allowed_types=("image/*",), max_files=3).to_json() == {
        "allowed_types": ["image/*"],
        "max_file_size": 10 * MIB,
        "max_total_size": 25 * MIB,
        "max_files": 3,
    }


def test_settings_missing_from_the_json_take_their_defaults() -> None:
    assert UploadPolicy.from_json({}) == UploadPolicy()
    assert UploadPolicy.from_json({"max_files": 2}) == UploadPolicy(max_files=2)


def test_json_holding_a_bad_setting_is_refused_as_the_constructor_would() -> None:
    with pytest.raises(ValueError, match="MIME type"):
        UploadPolicy.from_json({"allowed_types": ["not a type"]})
    with pytest.raises(ValueError, match="at least 1"):
        UploadPolicy.from_json({"max_file_size": 0})


# --- stored files --------------------------------------------------------------------


def _stored(index: int = 0, **changes: object) -> StoredFile:
    values: dict[str, object] = {
        "field": "cv",
        "name": "cv.pdf",
        "size": 1234,
        "content_type": "application/pdf",
        "sha256": "ab" * 32,
        "key": file_key(SUBMISSION_ID, index),
    }
    values.update(changes)
    return StoredFile(**values)  # type: ignore[arg-type]


def test_a_list_of_files_survives_its_json_form() -> None:
    files = (_stored(0), _stored(1, field="photo", name="me.png", content_type="image/png"))

    assert files_from_json(json.loads(json.dumps(files_to_json(files)))) == files
    assert files_to_json(()) == []
    assert files_from_json([]) == ()
    assert files_from_json(None) == ()


def test_a_file_is_described_with_its_digest_and_its_link() -> None:
    described = _stored().describe("https://forms.example/v1/files/x/0", "2026-01-22T12:00:00")

    assert described == {
        "field": "cv",
        "name": "cv.pdf",
        "size": 1234,
        "type": "application/pdf",
        "sha256": "ab" * 32,
        "digest": "sha256:" + "ab" * 32,
        "url": "https://forms.example/v1/files/x/0",
        "url_expires_at": "2026-01-22T12:00:00",
    }
    assert "url" not in _stored().describe(None)
    assert "key" not in described  # where the blob lives is the service's business


# --- keys ----------------------------------------------------------------------------


def test_a_file_key_is_the_submission_and_the_position() -> None:
    assert file_key(SUBMISSION_ID, 0) == f"{SUBMISSION_ID}/0"
    assert file_key(SUBMISSION_ID, 12) == f"{SUBMISSION_ID}/12"


@given(st.integers(0, 10_000))
def test_the_submission_of_a_file_key_is_found_again(index: int) -> None:
    assert submission_of_key(file_key(SUBMISSION_ID, index)) == SUBMISSION_ID


@pytest.mark.parametrize(
    "key",
    [
        SUBMISSION_ID,  # no position
        f"{SUBMISSION_ID}/",
        f"{SUBMISSION_ID}/x",
        f"{SUBMISSION_ID}/-1",
        f"{SUBMISSION_ID}/1.5",
        f"{SUBMISSION_ID}/0/extra",
        f"{SUBMISSION_ID}/²",  # a digit to str.isdigit, not a position
        f"{SUBMISSION_ID}/١",  # an Arabic-Indic digit
        ".incoming/0a1b2c",
        "backups/2026/01",
    ],
)
def test_a_key_intake_did_not_make_names_no_submission(key: str) -> None:
    assert submission_of_key(key) is None


# --- file names ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("cv.pdf", "cv.pdf"),
        ("C:\\Users\\ada\\Documents\\cv.pdf", "cv.pdf"),  # old browsers send the path
        ("/etc/passwd", "passwd"),
        ("../../secret.txt", "secret.txt"),
        ("a/b\\c.txt", "c.txt"),
        ("report\x00.pdf", "report.pdf"),
        ("line\r\nbreak.txt", "linebreak.txt"),
        ("tab\there.txt", "tabhere.txt"),
        ("\x7fdel.txt", "del.txt"),
        ("invoice\u202efdp.exe", "invoicefdp.exe"),  # a right-to-left override
        ("zero\u200bwidth.txt", "zerowidth.txt"),
        ("bom\ufeff.txt", "bom.txt"),
        ("  spaced.txt  ", "spaced.txt"),
        ("cafe\u0301.txt", "café.txt"),  # NFC: one code point for é
        ("résumé 2026.pdf", "résumé 2026.pdf"),
        ("日本語.txt", "日本語.txt"),
    ],
)
def test_a_file_name_is_cleaned_to_what_may_be_shown(raw: str, clean: str) -> None:
    assert clean_file_name(raw) == clean


@pytest.mark.parametrize(
    "raw", ["", " ", ".", "..", "../..", "dir/", "a/..", "\x00", "\u202e", "\u202e..", "C:\\"]
)
def test_a_name_that_leaves_nothing_usable_becomes_file(raw: str) -> None:
    assert clean_file_name(raw) == "file"


def test_a_long_name_is_cut_to_the_file_system_limit() -> None:
    assert clean_file_name("a" * 255) == "a" * 255
    assert clean_file_name("a" * 300 + ".pdf") == "a" * 255
    assert len(clean_file_name("é" * 1000)) == MAX_FILE_NAME


@given(st.text(max_size=300))
def test_a_cleaned_name_is_always_a_short_single_segment_without_controls(raw: str) -> None:
    name = clean_file_name(raw)

    assert 1 <= len(name) <= MAX_FILE_NAME
    assert "/" not in name
    assert "\\" not in name
    assert name not in (".", "..")
    assert not any(unicodedata.category(ch).startswith("C") for ch in name)


# --- validation ----------------------------------------------------------------------


REQUIRED_CV = FieldRule("cv", RuleKind.REQUIRED)


def test_a_required_file_field_holds_when_it_carries_a_file() -> None:
    assert validate({}, [REQUIRED_CV], reply_to=None, files_present=["cv"]) == {}


def test_a_required_file_field_without_a_file_is_reported() -> None:
    assert validate({}, [REQUIRED_CV], reply_to=None, files_present=["photo"]) == {
        "cv": MESSAGES[RuleKind.REQUIRED]
    }


def test_a_refused_file_type_is_its_fields_one_error() -> None:
    errors = validate(
        {"email": "not-an-address"},
        [REQUIRED_CV],
        reply_to=None,
        file_errors={"cv": TYPE_NOT_ACCEPTED},
    )

    assert errors == {"cv": TYPE_NOT_ACCEPTED, "email": MESSAGES[RuleKind.EMAIL]}


def test_a_file_to_a_form_that_takes_none_is_reported_as_before() -> None:
    assert validate({"cv": ""}, [], reply_to=None, file_fields=["cv"]) == {"cv": FILE_NOT_ACCEPTED}
    assert TYPE_NOT_ACCEPTED == "This type of file is not accepted."


# --- the idempotency fingerprint -------------------------------------------------------


FIELDS: FieldData = {"name": "Ada", "message": "Hello"}


def test_a_body_without_files_prints_as_it_always_has() -> None:
    canonical = json.dumps(FIELDS, sort_keys=True, separators=(",", ":"), ensure_ascii=False)

    assert fingerprint(FIELDS) == hashlib.sha256(canonical.encode()).hexdigest()
    assert fingerprint(FIELDS, ()) == fingerprint(FIELDS)


def test_the_same_files_print_the_same_wherever_they_are_stored() -> None:
    here = _stored(0)
    elsewhere = _stored(0, key="sub_other/0", content_type="text/plain")

    assert fingerprint(FIELDS, [here]) == fingerprint(FIELDS, [elsewhere])
    assert fingerprint(FIELDS, [here]) != fingerprint(FIELDS)


@pytest.mark.parametrize(
    "change",
    [
        {"sha256": "cd" * 32},
        {"size": 1235},
        {"name": "other.pdf"},
        {"field": "photo"},
    ],
)
def test_another_file_prints_differently(change: dict[str, object]) -> None:
    assert fingerprint(FIELDS, [_stored(0)]) != fingerprint(FIELDS, [_stored(0, **change)])


def test_the_order_of_files_is_part_of_the_print() -> None:
    first = _stored(0)
    second = _stored(1, name="b.pdf", sha256="cd" * 32)

    assert fingerprint(FIELDS, [first, second]) != fingerprint(FIELDS, [second, first])
