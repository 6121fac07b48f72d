"""Identifier and secret formats: submission ids, API keys and their hashes."""

from __future__ import annotations

import re
from urllib.parse import quote

import pytest
from hypothesis import given
from hypothesis import strategies as st

from intake.domain import ids

CROCKFORD = "0123456789abcdefghjkmnpqrstvwxyz"
MS_2025 = 1_735_689_600_000  # 2025-01-01T00:00:00Z

_ms = st.integers(min_value=0, max_value=2**48 - 1)
_sub_random = st.binary(min_size=12, max_size=12)


def flip_each_bit(random: bytes) -> list[bytes]:
    value = int.from_bytes(random, "big")
    return [(value ^ (1 << bit)).to_bytes(len(random), "big") for bit in range(len(random) * 8)]


def test_a_submission_id_is_sub_and_29_lowercase_crockford_characters() -> None:
    value = ids.submission_id(MS_2025, bytes(range(12)))

    assert re.fullmatch(rf"sub_[{CROCKFORD}]{{29}}", value)
    assert ids.is_submission_id(value)


def test_the_alphabet_is_crockfords_in_ascending_order_without_i_l_o_u() -> None:
    assert ids.encode_base32(int("".join("1" * 5 * 32), 2), 32) == "z" * 32
    assert [ids.encode_base32(n, 1) for n in range(32)] == list(CROCKFORD)
    assert sorted(CROCKFORD) == list(CROCKFORD)
    assert not set("ilou") & set(CROCKFORD)


@given(st.integers(min_value=0, max_value=2**300), st.integers(min_value=1, max_value=40))
def test_encoding_spells_the_low_bits_five_at_a_time_most_significant_first(
    value: int, length: int
) -> None:
    # The ids already issued were made digit by digit: the encoding must not move.
    digits = [CROCKFORD[(value >> (5 * place)) & 31] for place in range(length)]

    assert ids.encode_base32(value, length) == "".join(reversed(digits))


@given(_ms, _sub_random)
def test_a_submission_id_is_url_safe(unix_ms: int, random: bytes) -> None:
    value = ids.submission_id(unix_ms, random)

    assert quote(value, safe="") == value
    assert ids.is_submission_id(value)


@given(_ms, _ms, _sub_random, _sub_random)
def test_submission_ids_sort_by_time_whatever_their_random_part(
    first_ms: int, second_ms: int, first: bytes, second: bytes
) -> None:
    earlier, later = sorted((first_ms, second_ms))
    if earlier == later:
        return

    assert ids.submission_id(earlier, first) < ids.submission_id(later, second)


def test_ids_made_at_increasing_milliseconds_sort_in_that_order() -> None:
    made = [ids.submission_id(MS_2025 + step, bytes([255 - step]) * 12) for step in range(50)]

    assert sorted(made) == made


def test_every_one_of_the_96_random_bits_changes_the_submission_id() -> None:
    random = bytes(12)
    variants = {ids.submission_id(MS_2025, r) for r in [random, *flip_each_bit(random)]}

    assert ids.SUBMISSION_RANDOM_BYTES * 8 >= 96
    assert len(variants) == 97


@given(_sub_random, _sub_random)
def test_different_random_bytes_give_different_submission_ids(first: bytes, second: bytes) -> None:
    assert (ids.submission_id(MS_2025, first) == ids.submission_id(MS_2025, second)) is (
        first == second
    )


@pytest.mark.parametrize("size", [0, 11, 13, 16])
def test_a_submission_id_takes_exactly_12_random_bytes(size: int) -> None:
    with pytest.raises(ValueError, match="12 random bytes"):
        ids.submission_id(MS_2025, bytes(size))


@pytest.mark.parametrize(
    "value",
    [
        "",
        "sub_",
        "sub_" + "0" * 28,
        "sub_" + "0" * 30,
        "SUB_" + "0" * 29,
        "sub_" + "A" * 29,
        "sub_" + "i" * 29,
        "sub_" + "u" * 29,
        "evt_" + "0" * 29,
        "sub_" + "0" * 29 + "\n",
    ],
)
def test_anything_else_is_not_a_submission_id(value: str) -> None:
    assert not ids.is_submission_id(value)


def test_an_api_key_has_the_recognisable_prefix_and_at_least_160_random_bits() -> None:
    key = ids.api_key(bytes(range(24)))

    assert key.startswith("intake_sk_")
    assert ids.API_KEY_RANDOM_BYTES * 8 >= 160
    assert re.fullmatch(rf"intake_sk_[{CROCKFORD}]{{39}}", key)
    assert ids.is_well_formed_api_key(key)


def test_every_random_bit_changes_the_api_key() -> None:
    random = bytes(24)

    assert len({ids.api_key(r) for r in [random, *flip_each_bit(random)]}) == 24 * 8 + 1


@given(st.binary(min_size=24, max_size=24))
def test_every_generated_api_key_is_well_formed(random: bytes) -> None:
    assert ids.is_well_formed_api_key(ids.api_key(random))


def test_an_api_key_takes_exactly_24_random_bytes() -> None:
    with pytest.raises(ValueError, match="24 random bytes"):
        ids.api_key(bytes(20))


@pytest.mark.parametrize(
    "value",
    [
        "",
        "intake_sk_",
        "intake_sk_" + "0" * 38,
        "intake_sk_" + "0" * 40,
        "intake_pk_" + "0" * 39,
        "INTAKE_SK_" + "0" * 39,
        "intake_sk_" + "O" * 39,
        "intake_sk_" + "l" * 39,
        " intake_sk_" + "0" * 39,
        "intake_sk_" + "0" * 39 + "\n",
    ],
)
def test_anything_else_is_not_a_well_formed_api_key(value: str) -> None:
    assert not ids.is_well_formed_api_key(value)


def test_a_secret_hashes_to_the_same_32_bytes_every_time() -> None:
    key = ids.api_key(bytes(range(24)))

    assert ids.hash_secret(key) == ids.hash_secret(key)
    assert len(ids.hash_secret(key)) == 32
    assert ids.hash_secret(key) != ids.hash_secret(key + "x")


def test_same_hash_compares_hashes() -> None:
    key = ids.api_key(bytes(range(24)))
    stored = ids.hash_secret(key)

    assert ids.same_hash(stored, ids.hash_secret(key))
    assert not ids.same_hash(stored, ids.hash_secret(ids.api_key(bytes(24))))
    assert not ids.same_hash(stored, b"")


def test_time_sorted_and_prefixed_ids_carry_their_prefix() -> None:
    event = ids.time_sorted_id("evt", MS_2025, bytes(16))
    later = ids.time_sorted_id("evt", MS_2025 + 1, b"\xff" * 16)

    assert re.fullmatch(rf"evt_[{CROCKFORD}]{{36}}", event)
    assert event < later
    assert re.fullmatch(rf"frm_[{CROCKFORD}]{{26}}", ids.prefixed_id("frm", bytes(16)))


def test_a_public_form_key_has_no_prefix_and_is_url_safe() -> None:
    key = ids.public_form_key(bytes(range(10)))

    assert re.fullmatch(rf"[{CROCKFORD}]{{16}}", key)


def test_a_webhook_secret_is_whsec_and_base64() -> None:
    assert ids.webhook_secret(b"\x00" * 24) == "whsec_" + "A" * 32
