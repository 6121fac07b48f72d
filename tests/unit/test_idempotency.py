"""Idempotency keys: their form, the payload fingerprint and the 24-hour retention."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from random import Random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from intake.domain.client_network import client_network
from intake.domain.idempotency import (
    RETENTION,
    IdempotencyRecord,
    Route,
    fingerprint,
    is_valid_key,
    scope,
)
from intake.domain.model import FieldData


@pytest.mark.parametrize(
    "key",
    ["a", "x" * 255, "3f2b9c1e-4d5a-4b6c-8d7e-9f0a1b2c3d4e", "~!@#$%^&*()_+{}|:<>? ", " "],
)
def test_one_to_255_printable_ascii_characters_make_a_valid_key(key: str) -> None:
    assert is_valid_key(key)


@pytest.mark.parametrize(
    "key",
    ["", "x" * 256, "tab\there", "new\nline", "nul\x00", "del\x7f", "caf\u00e9", "\u2603", "\x1f"],
)
def test_anything_else_is_an_invalid_key(key: str) -> None:
    assert not is_valid_key(key)


CLIENT = client_network("198.51.100.7")


def test_the_server_scope_is_the_route_and_the_form() -> None:
    assert scope(Route.SERVER, "frm_1") == "server:frm_1"
    # The API key's workspace owns the form: the client's address plays no part.
    assert scope(Route.SERVER, "frm_1", CLIENT) == scope(Route.SERVER, "frm_1")
    assert scope(Route.SERVER, "frm_1") != scope(Route.SERVER, "frm_2")


def test_the_public_scope_is_the_route_the_form_and_the_client_network() -> None:
    assert scope(Route.PUBLIC, "frm_1", CLIENT) == "public:frm_1:198.51.100.7"
    assert scope(Route.PUBLIC, "frm_1", CLIENT) != scope(Route.SERVER, "frm_1")
    assert scope(Route.PUBLIC, "frm_1", CLIENT) != scope(Route.PUBLIC, "frm_2", CLIENT)
    others = [client_network("198.51.100.8"), client_network("2001:db8::1")]
    assert all(
        scope(Route.PUBLIC, "frm_1", CLIENT) != scope(Route.PUBLIC, "frm_1", other)
        for other in others
    )


def test_one_client_network_has_one_public_scope() -> None:
    spellings = ["2001:db8:1:2::1", "2001:db8:1:2:ffff::7", "2001:DB8:1:2::0:1"]
    assert len({scope(Route.PUBLIC, "frm_1", client_network(s)) for s in spellings}) == 1
    mapped = client_network("::ffff:198.51.100.7")
    assert scope(Route.PUBLIC, "frm_1", mapped) == scope(Route.PUBLIC, "frm_1", CLIENT)


def test_a_public_scope_without_a_client_network_is_refused() -> None:
    with pytest.raises(ValueError, match="client network"):
        scope(Route.PUBLIC, "frm_1")


def test_the_same_fields_in_another_order_have_the_same_fingerprint() -> None:
    first: FieldData = {"name": "Ada", "email": "ada@example.com", "_subject": "Hi"}
    second: FieldData = {"_subject": "Hi", "email": "ada@example.com", "name": "Ada"}

    assert fingerprint(first) == fingerprint(second)


def test_nested_objects_in_another_order_have_the_same_fingerprint() -> None:
    assert fingerprint({"a": {"x": 1, "y": 2}}) == fingerprint({"a": {"y": 2, "x": 1}})


@pytest.mark.parametrize(
    "other",
    [
        {"name": "Ada", "email": "eve@example.com"},
        {"name": "Ada"},
        {"name": "Ada", "email": "ada@example.com", "_gotcha": ""},
        {"name": "Ada", "email": ["ada@example.com"]},
    ],
)
def test_different_fields_or_values_have_different_fingerprints(other: FieldData) -> None:
    assert fingerprint({"name": "Ada", "email": "ada@example.com"}) != fingerprint(other)


def test_the_order_of_a_repeated_names_values_matters() -> None:
    assert fingerprint({"tags": ["a", "b"]}) != fingerprint({"tags": ["b", "a"]})


def test_a_fingerprint_is_a_sha256_hex_digest() -> None:
    digest = fingerprint({"a": "\u00e9"})

    assert len(digest) == 64
    assert set(digest) <= set("0123456789abcdef")


_values = st.one_of(
    st.text(max_size=10),
    st.integers(),
    st.booleans(),
    st.none(),
    st.lists(st.text(max_size=5), max_size=3),
)


@given(st.dictionaries(st.text(max_size=10), _values, max_size=10), st.randoms())
def test_a_fingerprint_does_not_depend_on_the_order_of_names(
    data: FieldData, random: Random
) -> None:
    items = list(data.items())
    random.shuffle(items)

    assert fingerprint(dict(items)) == fingerprint(data)


def record(created_at: datetime) -> IdempotencyRecord:
    return IdempotencyRecord("public:frm_1", "key-1", "print", "sub_1", created_at)


def test_a_record_is_kept_for_24_hours() -> None:
    created = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)

    assert timedelta(hours=24) == RETENTION
    assert not record(created).expired(created)
    assert not record(created).expired(created + timedelta(hours=24) - timedelta(microseconds=1))


def test_a_record_expires_at_24_hours() -> None:
    created = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)

    assert record(created).expired(created + timedelta(hours=24))
    assert record(created).expired(created + timedelta(days=3))
