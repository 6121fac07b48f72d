"""Reading bodies into fields: content types, the payload limits and malformed input."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from urllib.parse import quote, unquote_plus, urlencode

import pytest
from hypothesis import given
from hypothesis import strategies as st

from intake.domain.errors import ErrorCode, IntakeError
from intake.domain.limits import KIB, PayloadLimits
from intake.domain.model import FieldData, FieldValue
from intake.domain.payload import (
    ContentKind,
    ContentType,
    MultipartReader,
    ParsedBody,
    check_fields,
    content,
    parse_complete,
    parse_content_type,
    parse_json,
    parse_urlencoded,
    urlencoded,
)

LIMITS = PayloadLimits()
BOUNDARY = "----intake-test-boundary"
FORM = parse_content_type("application/x-www-form-urlencoded")
JSON = parse_content_type("application/json")
MULTIPART = parse_content_type(f"multipart/form-data; boundary={BOUNDARY}")
KINDS = [ContentKind.URLENCODED, ContentKind.MULTIPART, ContentKind.JSON]

Pairs = list[tuple[str, str]]


@contextmanager
def refused_with(code: ErrorCode) -> Iterator[None]:
    with pytest.raises(IntakeError) as caught:
        yield
    assert caught.value.rejection.code is code


# --- building bodies ---------------------------------------------------------------


def part(
    name: str | bytes,
    value: str | bytes,
    *,
    filename: str | None = None,
    content_type: str | None = None,
) -> bytes:
    raw_name = name.encode("utf-8") if isinstance(name, str) else name
    disposition = b'Content-Disposition: form-data; name="' + raw_name + b'"'
    if filename is not None:
        disposition += b'; filename="' + filename.encode("utf-8") + b'"'
    headers = [disposition]
    if content_type is not None:
        headers.append(b"Content-Type: " + content_type.encode("latin-1"))
    body = value.encode("utf-8") if isinstance(value, str) else value
    return b"\r\n".join(headers) + b"\r\n\r\n" + body


def multipart(*parts: bytes) -> bytes:
    dash = b"--" + BOUNDARY.encode("ascii")
    return b"".join(dash + b"\r\n" + p + b"\r\n" for p in parts) + dash + b"--\r\n"


def read_multipart(
    body: bytes, limits: PayloadLimits = LIMITS, chunk_size: int | None = None
) -> ParsedBody:
    reader = MultipartReader(MULTIPART, limits)
    size = chunk_size or max(1, len(body))
    for start in range(0, len(body), size):
        reader.feed(body[start : start + size])
    return reader.finish()


def json_object(pairs: Pairs) -> FieldData:
    """A repeated name becomes an array of its values, as a JSON client would send it."""
    data: FieldData = {}
    for name, value in pairs:
        if name not in data:
            data[name] = value
        else:
            existing = data[name]
            data[name] = [*existing, value] if isinstance(existing, list) else [existing, value]
    return data


def encode(kind: ContentKind, pairs: Pairs) -> tuple[bytes, ContentType]:
    if kind is ContentKind.URLENCODED:
        return urlencode(pairs).encode("ascii"), FORM
    if kind is ContentKind.JSON:
        return json.dumps(json_object(pairs)).encode("utf-8"), JSON
    return multipart(*(part(name, value) for name, value in pairs)), MULTIPART


def parse(kind: ContentKind, pairs: Pairs, limits: PayloadLimits = LIMITS) -> ParsedBody:
    body, content_type = encode(kind, pairs)
    return parse_complete(body, content_type, limits)


def names(count: int) -> Pairs:
    return [(f"field{i}", "x") for i in range(count)]


# --- content type ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("header", "kind"),
    [
        ("application/x-www-form-urlencoded", ContentKind.URLENCODED),
        ("application/json", ContentKind.JSON),
        ("multipart/form-data; boundary=abc", ContentKind.MULTIPART),
        ("application/json; charset=utf-8", ContentKind.JSON),
        ("application/x-www-form-urlencoded; charset=UTF-8", ContentKind.URLENCODED),
        ("Application/JSON", ContentKind.JSON),
        ("MULTIPART/FORM-DATA; BOUNDARY=abc", ContentKind.MULTIPART),
        ("application/json ; charset = utf-8", ContentKind.JSON),
    ],
)
def test_the_three_types_are_recognised_with_parameters_and_in_any_case(
    header: str, kind: ContentKind
) -> None:
    assert parse_content_type(header).kind is kind


def test_the_multipart_boundary_and_the_charset_are_kept() -> None:
    content_type = parse_content_type('multipart/form-data; boundary="a b"; charset=latin-1')

    assert content_type.boundary == b"a b"
    assert content_type.charset == "iso8859-1"


def test_the_charset_defaults_to_utf_8() -> None:
    assert parse_content_type("application/json").charset == "utf-8"


@pytest.mark.parametrize(
    "header",
    [
        None,
        "",
        "text/plain",
        "application/xml",
        "text/html; charset=utf-8",
        "application/jsonx",
        "application/json-patch+json",
        "multipart/mixed; boundary=abc",
        "application/json\u20ac",
    ],
)
def test_any_other_or_a_missing_type_is_unsupported(header: str | None) -> None:
    with refused_with(ErrorCode.UNSUPPORTED_CONTENT_TYPE):
        parse_content_type(header)


@pytest.mark.parametrize(
    "header",
    [
        "application/json; charset=no-such-charset",
        "application/json; charset=base64",
        "multipart/form-data; boundary=abc; charset=rot13",
    ],
)
def test_a_charset_that_is_no_text_encoding_is_an_unsupported_type(header: str) -> None:
    with refused_with(ErrorCode.UNSUPPORTED_CONTENT_TYPE):
        parse_content_type(header)


@pytest.mark.parametrize("header", ["multipart/form-data", "multipart/form-data; boundary="])
def test_a_multipart_body_without_a_boundary_is_malformed_when_read(header: str) -> None:
    content_type = parse_content_type(header)

    with refused_with(ErrorCode.MALFORMED_REQUEST):
        MultipartReader(content_type, PayloadLimits())


# --- the limits, at the boundary and one over, for every content type --------------


def test_a_kib_is_1024_bytes_and_the_defaults_are_those_of_the_decisions() -> None:
    assert KIB == 1024
    assert LIMITS.max_body == 262_144
    assert LIMITS.max_fields == 100
    assert LIMITS.max_name == 128
    assert LIMITS.max_value == 20_480
    assert LIMITS.max_total == 204_800
    assert LIMITS.max_depth == 3


@pytest.mark.parametrize("kind", KINDS)
def test_one_hundred_fields_are_accepted(kind: ContentKind) -> None:
    assert len(parse(kind, names(100)).data) == 100


@pytest.mark.parametrize("kind", KINDS)
def test_one_hundred_and_one_fields_are_too_large(kind: ContentKind) -> None:
    with refused_with(ErrorCode.PAYLOAD_TOO_LARGE):
        parse(kind, names(101))


@pytest.mark.parametrize("kind", KINDS)
def test_control_fields_count_towards_the_field_limit(kind: ContentKind) -> None:
    assert len(parse(kind, [*names(99), ("_gotcha", "")]).data) == 100
    with refused_with(ErrorCode.PAYLOAD_TOO_LARGE):
        parse(kind, [*names(99), ("_gotcha", ""), ("_next", "https://example.com/")])


@pytest.mark.parametrize("kind", KINDS)
def test_a_repeated_name_counts_once_per_value(kind: ContentKind) -> None:
    assert parse(kind, [("tags", str(i)) for i in range(100)]).data["tags"] == [
        str(i) for i in range(100)
    ]
    with refused_with(ErrorCode.PAYLOAD_TOO_LARGE):
        parse(kind, [("tags", str(i)) for i in range(101)])


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(
    "name",
    [
        "n" * 128,
        "\u00e9" * 64,  # 2 bytes each
        "\u20ac" * 42 + "ab",  # 3 bytes each
        "\U0001f600" * 32,  # 4 bytes each
    ],
)
def test_a_name_of_128_utf8_bytes_is_accepted(kind: ContentKind, name: str) -> None:
    assert len(name.encode("utf-8")) == 128
    assert parse(kind, [(name, "x")]).data == {name: "x"}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(
    "name",
    [
        "n" * 129,
        "\u00e9" * 64 + "a",
        "\u20ac" * 43,  # 43 characters, but 129 bytes
        "\U0001f600" * 32 + "a",
    ],
)
def test_a_name_of_129_utf8_bytes_is_too_large(kind: ContentKind, name: str) -> None:
    assert len(name.encode("utf-8")) == 129
    with refused_with(ErrorCode.PAYLOAD_TOO_LARGE):
        parse(kind, [(name, "x")])


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("value", ["v" * 20_480, "\u00e9" * 10_240, "\u20ac" * 6_826 + "ab"])
def test_a_value_of_20_kib_in_utf8_bytes_is_accepted(kind: ContentKind, value: str) -> None:
    assert len(value.encode("utf-8")) == 20_480
    assert parse(kind, [("message", value)]).data == {"message": value}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("value", ["v" * 20_481, "\u00e9" * 10_240 + "a", "\u20ac" * 6_827])
def test_a_value_one_byte_over_20_kib_is_too_large(kind: ContentKind, value: str) -> None:
    assert len(value.encode("utf-8")) == 20_481
    with refused_with(ErrorCode.PAYLOAD_TOO_LARGE):
        parse(kind, [("message", value)])


@pytest.mark.parametrize("kind", KINDS)
def test_total_text_of_exactly_200_kib_is_accepted(kind: ContentKind) -> None:
    pairs = [(f"f{i}", "v" * 20_480) for i in range(10)]

    assert len(parse(kind, pairs).data) == 10


@pytest.mark.parametrize("kind", KINDS)
def test_total_text_one_byte_over_200_kib_is_too_large(kind: ContentKind) -> None:
    pairs = [*((f"f{i}", "v" * 20_480) for i in range(10)), ("last", "v")]

    with refused_with(ErrorCode.PAYLOAD_TOO_LARGE):
        parse(kind, pairs)


def test_total_text_counts_utf8_bytes_not_characters() -> None:
    limits = PayloadLimits(max_total=10)

    assert parse_urlencoded(urlencode({"a": "\u00e9" * 5}).encode(), FORM, limits).data
    with refused_with(ErrorCode.PAYLOAD_TOO_LARGE):
        parse_urlencoded(urlencode({"a": "\u00e9" * 5, "b": "c"}).encode(), FORM, limits)


def test_limits_are_read_from_the_limits_given() -> None:
    limits = PayloadLimits(max_fields=2)

    assert parse(ContentKind.URLENCODED, names(2), limits).data
    with refused_with(ErrorCode.PAYLOAD_TOO_LARGE):
        parse(ContentKind.URLENCODED, names(3), limits)


# --- JSON depth --------------------------------------------------------------------


def parse_json_text(text: str, limits: PayloadLimits = LIMITS) -> FieldData:
    return parse_json(text.encode("utf-8"), JSON, limits).data


@pytest.mark.parametrize(
    "document",
    [
        {"a": "x"},
        {"a": {"b": "x"}},
        {"a": {"b": {"c": "x"}}},
        {"a": {"b": {"c": ["x", "y"]}}},
        {"a": ["x", 1, True, None]},
        {"a": [{"b": "x"}, {"b": "y"}]},
        {"a": {"b": {"c": []}}},
        {"a": {}},
    ],
)
def test_json_within_three_levels_is_kept_as_it_is(document: FieldData) -> None:
    assert parse_json_text(json.dumps(document)) == document


@pytest.mark.parametrize(
    "document",
    [
        {"a": {"b": {"c": {"d": "x"}}}},
        {"a": {"b": {"c": {}}}},
        {"a": [{"b": {"c": "x"}}]},
        {"a": {"b": {"c": [{"d": "x"}]}}},
        {"a": {"b": {"c": [["x"]]}}},
        {"ok": "x", "deep": {"b": {"c": {"d": "x"}}}},
    ],
)
def test_json_one_level_deeper_is_too_large(document: FieldData) -> None:
    with refused_with(ErrorCode.PAYLOAD_TOO_LARGE):
        parse_json_text(json.dumps(document))


@pytest.mark.parametrize(
    "text",
    [
        '{"a":' * 10_000 + '"x"' + "}" * 10_000,
        '{"a":' + "[" * 10_000 + "]" * 10_000 + "}",
        "[" * 10_000 + "]" * 10_000,
        '{"a":' * 200 + '"x"' + "}" * 200,  # deep, yet within the parser's recursion limit
    ],
)
def test_json_nested_far_past_the_limit_is_too_large_and_not_a_crash(text: str) -> None:
    with refused_with(ErrorCode.PAYLOAD_TOO_LARGE):
        parse_json_text(text)


def test_json_arrays_count_each_further_value_as_a_field() -> None:
    limits = PayloadLimits(max_fields=3)

    assert parse_json_text('{"a": [1, 2, 3]}', limits) == {"a": [1, 2, 3]}
    with refused_with(ErrorCode.PAYLOAD_TOO_LARGE):
        parse_json_text('{"a": [1, 2, 3, 4]}', limits)


def test_json_numbers_booleans_and_null_are_kept_with_their_types() -> None:
    document = {"n": 3, "f": 2.5, "neg": -1e-3, "t": True, "z": None}

    assert parse_json_text(json.dumps(document)) == document


# --- malformed bodies --------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        b'{"a": }',
        b"{",
        b"",
        b'{"a": "x"} trailing',
        b"[1, 2]",
        b'"text"',
        b"42",
        b"null",
        b'{"a": NaN}',
        b'{"a": Infinity}',
        b'{"a": -Infinity}',
        b'{"a": 1e400}',
        b'{"a": -1e400}',
        b'{"a": ' + b"1" * 5_000 + b"}",
        b'{"a": "\xff"}',
        b'{"\xc3": "x"}',
        b'{"a": "\\ud800"}',
        b'{"\\udfff": "x"}',
        b'{"a": ["ok", "\\ud83d"]}',
        b'\xef\xbb\xbf{"a": "x"}',
    ],
)
def test_a_json_body_that_is_not_a_utf8_object_is_malformed(body: bytes) -> None:
    with refused_with(ErrorCode.MALFORMED_REQUEST):
        parse_json(body, JSON, LIMITS)


def test_json_surrogate_pairs_written_as_escapes_are_one_character() -> None:
    assert parse_json(b'{"a": "\\ud83d\\ude00"}', JSON, LIMITS).data == {"a": "\U0001f600"}


@given(
    st.lists(
        st.tuples(
            st.text(alphabet="ab+%=2E\u00e9", max_size=8),
            st.text(alphabet="ab +%&=2E\u00e9", max_size=12),
        ),
        max_size=4,
    )
)
def test_urlencoded_names_and_values_read_as_unquote_plus_reads_them(pairs: Pairs) -> None:
    # Raw pairs, escapes (whole, broken or none) and `+` as they come.
    body = "&".join(f"{quote(n, safe='+%')}={quote(v, safe='+%')}" for n, v in pairs)
    expected: dict[str, list[str]] = {}
    for pair in body.split("&"):
        if pair:
            raw_name, _, raw_value = pair.partition("=")
            expected.setdefault(unquote_plus(raw_name), []).append(unquote_plus(raw_value))
    try:
        data = parse_urlencoded(body.encode(), FORM, LIMITS).data
    except IntakeError:
        return  # a broken escape that is no UTF-8, or a limit
    read = {name: value if isinstance(value, list) else [value] for name, value in data.items()}
    assert read == expected


@given(
    st.text(alphabet="ab+%2EeFf9\u00e9\u20ac", max_size=16),
    st.sampled_from(["utf-8", "iso8859-1", "ascii", "cp1252", "utf-16-le"]),
)
def test_a_urlencoded_name_or_value_reads_as_unquote_plus_reads_it_strictly(
    text: str, charset: str
) -> None:
    try:
        expected: str | None = unquote_plus(text, encoding=charset, errors="strict")
    except UnicodeError:
        expected = None  # refused as malformed
    if expected is None:
        with refused_with(ErrorCode.MALFORMED_REQUEST):
            urlencoded._unquoted(text, charset)
    else:
        assert urlencoded._unquoted(text, charset) == expected


@pytest.mark.parametrize(
    "body", [b"a=\xff", b"\xff=1", b"a=%ff", b"%C3=1", b"a=%ED%A0%80", b"a=ok&b=%e2%82"]
)
def test_urlencoded_bytes_that_are_not_utf8_even_percent_encoded_are_malformed(
    body: bytes,
) -> None:
    with refused_with(ErrorCode.MALFORMED_REQUEST):
        parse_urlencoded(body, FORM, LIMITS)


def test_urlencoded_text_is_decoded_in_the_declared_charset() -> None:
    latin = parse_content_type("application/x-www-form-urlencoded; charset=iso-8859-1")

    assert parse_urlencoded(b"name=Jos%E9&city=M\xfcnchen", latin, LIMITS).data == {
        "name": "Jos\u00e9",
        "city": "M\u00fcnchen",
    }


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"not multipart at all",
        b"--" + BOUNDARY.encode() + b'\r\nContent-Disposition: form-data; name="a"\r\n\r\nx',
        multipart(part("a", "x"))[:-4],  # the closing boundary cut short
        multipart(part("a", "x")).replace(b"\r\n\r\n", b"\r\n", 1),  # headers never end
        b"--" + BOUNDARY.encode() + b"\r\n\r\nx\r\n--" + BOUNDARY.encode() + b"--\r\n",
        multipart(b"Content-Disposition: form-data\r\n\r\nx"),
        multipart(b'Content-Disposition: form-data; filename="a.txt"\r\n\r\nx'),
        multipart(b"Content-Type: text/plain\r\n\r\nx"),
        multipart(part("a", b"\xff\xfe")),
        multipart(part(b"\xff", "x")),
        multipart(part("a", b"x", content_type="text/plain; charset=no-such-charset")),
        multipart(part("a", b"x", content_type="text/plain; charset=base64")),
        b'--other-boundary\r\nContent-Disposition: form-data; name="a"\r\n\r\nx\r\n'
        b"--other-boundary--\r\n",
    ],
)
def test_a_broken_multipart_body_is_malformed(body: bytes) -> None:
    with refused_with(ErrorCode.MALFORMED_REQUEST):
        read_multipart(body)


# --- what is kept --------------------------------------------------------------------


@pytest.mark.parametrize("kind", [ContentKind.URLENCODED, ContentKind.MULTIPART])
def test_a_repeated_name_keeps_every_value_in_order(kind: ContentKind) -> None:
    pairs = [("tags", "b"), ("name", "Ada"), ("tags", "a"), ("tags", "c")]

    assert parse(kind, pairs).data == {"tags": ["b", "a", "c"], "name": "Ada"}


@pytest.mark.parametrize("kind", KINDS)
def test_fields_keep_the_order_they_arrived_in(kind: ContentKind) -> None:
    pairs = [("zeta", "1"), ("alpha", "2"), ("mid", "3")]

    assert list(parse(kind, pairs).data) == ["zeta", "alpha", "mid"]


def test_json_arrays_are_kept_as_the_values_of_a_repeated_name() -> None:
    assert parse_json_text('{"tags": ["a", "b"]}') == {"tags": ["a", "b"]}


def test_plus_and_percent_20_both_decode_to_a_space() -> None:
    data = parse_urlencoded(b"greeting=hello+world%20again%2B1&a+b=c", FORM, LIMITS).data

    assert data == {"greeting": "hello world again+1", "a b": "c"}


def test_empty_values_are_kept_in_urlencoded_bodies() -> None:
    assert parse_urlencoded(b"a=&b&&c=1", FORM, LIMITS).data == {"a": "", "b": "", "c": "1"}


def test_empty_values_are_kept_in_multipart_and_json_bodies() -> None:
    assert read_multipart(multipart(part("a", ""))).data == {"a": ""}
    assert parse_json_text('{"a": ""}') == {"a": ""}


def test_an_empty_urlencoded_body_has_no_fields() -> None:
    assert parse_urlencoded(b"", FORM, LIMITS).data == {}


def test_a_multipart_body_with_only_the_closing_boundary_has_no_fields() -> None:
    assert read_multipart(multipart()) == ParsedBody(data={})


def test_a_multipart_body_fed_a_byte_at_a_time_reads_the_same() -> None:
    body = multipart(
        part("name", "Ada Lovelace"),
        part("tags", "a"),
        part("tags", "b"),
        part("note", "\u00e9t\u00e9 \u2603"),
    )

    assert read_multipart(body, chunk_size=1) == read_multipart(body)
    assert read_multipart(body).data == {
        "name": "Ada Lovelace",
        "tags": ["a", "b"],
        "note": "\u00e9t\u00e9 \u2603",
    }


def test_a_multipart_part_may_declare_its_own_charset() -> None:
    body = multipart(part("city", b"M\xfcnchen", content_type="text/plain; charset=latin-1"))

    assert read_multipart(body).data == {"city": "M\u00fcnchen"}


def test_a_multipart_file_part_is_recorded_by_name_and_its_bytes_are_not_kept() -> None:
    body = multipart(
        part("name", "Ada"),
        part("cv", b"%PDF-1.7 secret bytes", filename="cv.pdf", content_type="application/pdf"),
    )

    parsed = read_multipart(body)

    assert parsed.file_fields == ("cv",)
    assert parsed.data == {"name": "Ada", "cv": ""}


def test_a_multipart_file_part_with_an_empty_filename_and_bytes_is_still_a_file() -> None:
    parsed = read_multipart(multipart(part("cv", b"%PDF-1.4", filename="")))

    assert parsed.file_fields == ("cv",)


def test_an_empty_file_input_is_no_file_and_no_field() -> None:
    """What a browser sends for an optional file input left empty."""
    parsed = read_multipart(multipart(part("name", "Ada"), part("cv", b"", filename="")))

    assert parsed.file_fields == ()
    assert parsed.data == {"name": "Ada"}


def test_multipart_file_bytes_do_not_count_against_the_body_limit() -> None:
    limits = PayloadLimits(max_body=1 * KIB)
    body = multipart(part("name", "Ada"), part("cv", b"x" * (100 * KIB), filename="cv.bin"))

    assert read_multipart(body, limits, chunk_size=4096).file_fields == ("cv",)


def test_a_file_part_larger_than_the_default_256_kib_body_limit_is_not_refused() -> None:
    body = multipart(part("name", "Ada"), part("cv", b"x" * (300 * KIB), filename="cv.bin"))

    parsed = read_multipart(body, chunk_size=64 * KIB)

    assert parsed.data == {"name": "Ada", "cv": ""}
    assert parsed.file_fields == ("cv",)


def test_multipart_text_bytes_count_against_the_body_limit() -> None:
    limits = PayloadLimits(max_body=1 * KIB, max_value=10 * KIB, max_total=10 * KIB)
    fits = multipart(part("a", "x" * 512), part("b", "x" * 512))
    over = multipart(part("a", "x" * 512), part("b", "x" * 513))

    assert read_multipart(fits, limits).data == {"a": "x" * 512, "b": "x" * 512}
    with refused_with(ErrorCode.PAYLOAD_TOO_LARGE):
        read_multipart(over, limits)


def test_a_multipart_value_in_another_charset_counts_its_utf8_bytes() -> None:
    # 15,000 latin-1 bytes are 30,000 UTF-8 bytes: over the 20 KiB value limit.
    body = multipart(part("a", b"\xe9" * 15_000, content_type="text/plain; charset=latin-1"))

    with refused_with(ErrorCode.PAYLOAD_TOO_LARGE):
        read_multipart(body)


def test_a_refusal_met_mid_stream_is_raised_by_the_feed_that_met_it() -> None:
    reader = MultipartReader(MULTIPART, PayloadLimits(max_value=10))
    body = multipart(part("a", "x" * 100))

    with refused_with(ErrorCode.PAYLOAD_TOO_LARGE):
        reader.feed(body)


# --- in-process fields ---------------------------------------------------------------


def test_checked_fields_within_the_limits_are_handed_back() -> None:
    data: FieldData = {"name": "Ada", "tags": ["a", "b"], "address": {"city": {"zip": "1"}}}

    assert check_fields(data, LIMITS) == ParsedBody(data=data)


@pytest.mark.parametrize(
    ("data", "code"),
    [
        ({f"f{i}": "x" for i in range(101)}, ErrorCode.PAYLOAD_TOO_LARGE),
        ({"n" * 129: "x"}, ErrorCode.PAYLOAD_TOO_LARGE),
        ({"a": "v" * 20_481}, ErrorCode.PAYLOAD_TOO_LARGE),
        ({"a": {"b": {"c": {"d": "x"}}}}, ErrorCode.PAYLOAD_TOO_LARGE),
        ({"a": "\ud800"}, ErrorCode.MALFORMED_REQUEST),
    ],
)
def test_checked_fields_meet_the_same_limits_as_a_body(data: FieldData, code: ErrorCode) -> None:
    with refused_with(code):
        check_fields(data, LIMITS)


# --- properties ----------------------------------------------------------------------

# NUL is refused (no form field holds it, and PostgreSQL cannot store it); tested apart.
_text = st.characters(codec="utf-8", exclude_characters="\x00")
_pairs = st.lists(st.tuples(st.text(_text, max_size=24), st.text(_text, max_size=200)), max_size=40)


def grouped(pairs: Pairs) -> dict[str, list[str]]:
    values: dict[str, list[str]] = {}
    for name, value in pairs:
        values.setdefault(name, []).append(value)
    return values


def as_lists(data: FieldData) -> dict[str, list[FieldValue]]:
    return {name: value if isinstance(value, list) else [value] for name, value in data.items()}


@given(_pairs)
def test_urlencoded_gives_back_every_value_in_order(pairs: Pairs) -> None:
    body = urlencode(pairs).encode("ascii")

    data = parse_urlencoded(body, FORM, LIMITS).data

    assert as_lists(data) == grouped(pairs)
    assert list(data) == list(grouped(pairs))


@given(_pairs)
def test_multipart_gives_back_every_value_in_order(pairs: Pairs) -> None:
    pairs = [(name, value) for name, value in pairs if '"' not in name and "\r" not in name]
    body, _ = encode(ContentKind.MULTIPART, pairs)

    assert as_lists(read_multipart(body).data) == grouped(pairs)


PARSE_CODES = {ErrorCode.MALFORMED_REQUEST, ErrorCode.PAYLOAD_TOO_LARGE}


def outcome(parse: Callable[[], ParsedBody]) -> ParsedBody | ErrorCode:
    """What a parse gives: fields, or the code of its refusal. Anything else raises."""
    try:
        return parse()
    except IntakeError as error:
        return error.rejection.code


def is_an_answer(result: ParsedBody | ErrorCode) -> bool:
    return isinstance(result, ParsedBody) or result in PARSE_CODES


# Lone surrogates are drawn on purpose: `json.dumps` writes them as `\\ud800` escapes.
# (st.text drops surrogates whatever its alphabet, so the characters are joined here.)
_json_text = st.lists(st.characters() | st.characters(categories=["Cs"]), max_size=20).map("".join)
_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | _json_text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_json_text, inner),
    max_leaves=20,
)


@given(st.binary(max_size=512))
def test_parse_json_raises_nothing_but_an_intake_error_on_any_bytes(body: bytes) -> None:
    assert is_an_answer(outcome(lambda: parse_json(body, JSON, LIMITS)))


@given(_json_values)
def test_parse_json_either_refuses_a_json_value_or_reads_it_whole(value: object) -> None:
    # ensure_ascii writes lone surrogates as escapes; NaN and Infinity as bare words.
    body = json.dumps(value, ensure_ascii=True).encode("ascii")

    try:
        parsed = parse_json(body, JSON, LIMITS)
    except IntakeError:
        return
    assert parsed.data == json.loads(body)


@given(st.binary(max_size=512), st.integers(min_value=1, max_value=64))
def test_the_multipart_reader_raises_nothing_but_an_intake_error_on_any_bytes(
    body: bytes, chunk_size: int
) -> None:
    assert is_an_answer(outcome(lambda: read_multipart(body, chunk_size=chunk_size)))


_part_bytes = st.binary(max_size=40) | st.sampled_from(
    [b'Content-Disposition: form-data; name="a"', b"\r\n\r\n", b"\r\n", b'; filename="f"']
)


@given(st.lists(st.lists(_part_bytes, max_size=5).map(b"".join), max_size=5))
def test_the_multipart_reader_raises_nothing_but_an_intake_error_on_odd_parts(
    parts: list[bytes],
) -> None:
    assert is_an_answer(outcome(lambda: read_multipart(multipart(*parts))))


@pytest.mark.parametrize(
    ("content_type", "body"),
    [
        ("application/x-www-form-urlencoded", b"a=x%00y"),
        ("application/x-www-form-urlencoded", b"a%00b=x"),
        ("application/json", b'{"a": "x\\u0000y"}'),
        ("application/json", b'{"a\\u0000": "x"}'),
    ],
)
def test_a_nul_character_in_a_name_or_value_is_malformed(content_type: str, body: bytes) -> None:
    with pytest.raises(IntakeError) as caught:
        parse_complete(body, parse_content_type(content_type), PayloadLimits())

    assert caught.value.rejection.code is ErrorCode.MALFORMED_REQUEST


def _read_type(parse: Callable[[str], ContentType], header: str) -> ContentType | ErrorCode:
    try:
        return parse(header)
    except IntakeError as error:
        return error.rejection.code


@given(
    st.one_of(
        st.sampled_from(
            [
                "application/x-www-form-urlencoded",
                "Application/JSON; charset=latin-1",
                "application/json; charset=base64",
                "text/plain",
                "multipart/form-data; boundary=abc",
            ]
        ),
        st.text(max_size=40),
    )
)
def test_a_content_type_read_again_is_read_as_it_was_the_first_time(header: str) -> None:
    expected = (
        _read_type(content._parse_content_type, header)
        if header
        else ErrorCode.UNSUPPORTED_CONTENT_TYPE
    )
    for _ in range(2):
        assert _read_type(parse_content_type, header) == expected


def test_multipart_types_are_not_kept_their_boundary_differs_each_time() -> None:
    for n in range(100):
        parse_content_type(f"multipart/form-data; boundary=b{n}")
    assert not any(header.startswith("multipart/") for header in content._KNOWN_TYPES)
