"""Identifier and secret formats. Pure: callers pass the time and the random bytes."""

from __future__ import annotations

import base64
import hashlib
import hmac
import re

# Crockford's base32, lower case: URL-safe, unambiguous, and in ascending ASCII order,
# so fixed-width encodings sort like the numbers they encode.
_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"

SUBMISSION_RANDOM_BYTES = 12  # 96 random bits, the least decisions.md allows
ID_RANDOM_BYTES = 16
API_KEY_RANDOM_BYTES = 24  # 192 bits; at least 160 are required
SECRET_RANDOM_BYTES = 24

API_KEY_PREFIX = "intake_sk_"
WEBHOOK_SECRET_PREFIX = "whsec_"  # noqa: S105 - a format prefix, not a secret
_API_KEY_RE = re.compile(r"intake_sk_[0-9a-hjkmnp-tv-z]{39}")
_SUBMISSION_ID_RE = re.compile(r"sub_[0-9a-hjkmnp-tv-z]{29}")


# Every pair of characters, by the 10 bits it spells: an id of 29 characters is made in
# 15 steps rather than 29, and every request makes two.
_PAIRS = tuple(first + second for first in _ALPHABET for second in _ALPHABET)


def encode_base32(value: int, length: int) -> str:
    """The low `length` * 5 bits of `value`, most significant first, a character each 5."""
    parts = []
    if length & 1:
        parts.append(_ALPHABET[value & 31])
        value >>= 5
    for _ in range(length >> 1):
        parts.append(_PAIRS[value & 1023])
        value >>= 10
    return "".join(reversed(parts))


def _chars_for(bits: int) -> int:
    return -(-bits // 5)


def submission_id(unix_ms: int, random: bytes) -> str:
    """`sub_` + 48 bits of milliseconds + 96 random bits: unguessable and time-sortable."""
    if len(random) != SUBMISSION_RANDOM_BYTES:
        raise ValueError("submission ids take 12 random bytes")
    value = ((unix_ms & (2**48 - 1)) << 96) | int.from_bytes(random, "big")
    return "sub_" + encode_base32(value, _chars_for(48 + 96))


def is_submission_id(value: str) -> bool:
    return _SUBMISSION_ID_RE.fullmatch(value) is not None  # `$` would allow a final \n


def prefixed_id(prefix: str, random: bytes) -> str:
    return f"{prefix}_{encode_base32(int.from_bytes(random, 'big'), _chars_for(len(random) * 8))}"


def time_sorted_id(prefix: str, unix_ms: int, random: bytes) -> str:
    value = ((unix_ms & (2**48 - 1)) << (len(random) * 8)) | int.from_bytes(random, "big")
    return f"{prefix}_{encode_base32(value, _chars_for(48 + len(random) * 8))}"


def public_form_key(random: bytes) -> str:
    # No prefix: it is embedded in customers' HTML and shorter reads better in a URL.
    return encode_base32(int.from_bytes(random, "big"), _chars_for(len(random) * 8))


def api_key(random: bytes) -> str:
    if len(random) != API_KEY_RANDOM_BYTES:
        raise ValueError("API keys take 24 random bytes")
    return API_KEY_PREFIX + encode_base32(int.from_bytes(random, "big"), _chars_for(192))


def is_well_formed_api_key(value: str) -> bool:
    return _API_KEY_RE.fullmatch(value) is not None


def hash_secret(value: str) -> bytes:
    """Keys carry 192 random bits, so one SHA-256 is enough; no slow hash is needed."""
    return hashlib.sha256(value.encode("utf-8")).digest()


def same_hash(a: bytes, b: bytes) -> bool:
    return hmac.compare_digest(a, b)


def webhook_secret(random: bytes) -> str:
    return WEBHOOK_SECRET_PREFIX + base64.b64encode(random).decode("ascii")
