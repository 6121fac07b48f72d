"""Signed download links: what a link looks like, and that only a genuine, unexpired one
for the very file it names is accepted."""

from __future__ import annotations

import base64
import hashlib
import hmac
from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qs, unquote, urlsplit

import pytest
from hypothesis import given
from hypothesis import strategies as st

from intake.domain.signing import DEFAULT_LINK_TTL, DownloadSigner

SECRET = b"s" * 32
NOW = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)
BASE = "https://forms.example.com"


def signer(**options: object) -> DownloadSigner:
    values: dict[str, object] = {"secret": SECRET, "base_url": BASE, **options}
    return DownloadSigner(**values)  # type: ignore[arg-type]


def query(url: str) -> tuple[str, str]:
    """(expires, signature) of a link."""
    parsed = parse_qs(urlsplit(url).query, strict_parsing=True)
    assert set(parsed) == {"expires", "signature"}
    return parsed["expires"][0], parsed["signature"][0]


def test_a_link_names_the_file_its_expiry_and_a_signature() -> None:
    link = signer().link("sub_01abc", 2, NOW)

    expires = int((NOW + DEFAULT_LINK_TTL).timestamp())
    url = urlsplit(link.url)
    assert (url.scheme, url.netloc, url.path) == (
        "https",
        "forms.example.com",
        "/v1/files/sub_01abc/2",
    )
    assert query(link.url)[0] == str(expires)
    assert link.expires_at == datetime.fromtimestamp(expires, UTC)
    assert link.expires_at.tzinfo is not None


def test_the_signature_is_an_hmac_sha256_of_the_file_and_the_expiry() -> None:
    link = signer().link("sub_01abc", 2, NOW)
    expires, signature = query(link.url)

    message = f"intake-download-v1\nsub_01abc\n2\n{expires}".encode()
    digest = hmac.new(SECRET, message, hashlib.sha256).digest()
    assert signature == base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
    assert signature.isascii()
    assert "=" not in signature


def test_the_default_lifetime_is_seven_days_and_another_may_be_chosen() -> None:
    assert timedelta(days=7) == DEFAULT_LINK_TTL

    link = signer(ttl=timedelta(hours=1)).link("sub_1", 0, NOW)

    assert link.expires_at == NOW + timedelta(hours=1)


def test_a_trailing_slash_of_the_base_url_is_not_doubled() -> None:
    link = signer(base_url=BASE + "/").link("sub_1", 0, NOW)

    assert link.url.startswith(f"{BASE}/v1/files/sub_1/0?")


def test_an_id_that_is_not_a_plain_path_segment_is_percent_encoded() -> None:
    link = signer().link("sub/../x?y", 0, NOW)

    path = urlsplit(link.url).path
    assert path == "/v1/files/sub%2F..%2Fx%3Fy/0"
    assert unquote(path.split("/")[3]) == "sub/../x?y"


def test_a_genuine_link_is_accepted_until_it_expires() -> None:
    made = signer()
    expires, signature = query(made.link("sub_1", 0, NOW).url)
    deadline = NOW + DEFAULT_LINK_TTL

    assert made.verify("sub_1", 0, expires, signature, NOW)
    assert made.verify("sub_1", 0, expires, signature, deadline - timedelta(seconds=1))
    assert not made.verify("sub_1", 0, expires, signature, deadline)
    assert not made.verify("sub_1", 0, expires, signature, deadline + timedelta(days=1))


def test_a_link_is_good_for_its_own_file_only() -> None:
    made = signer()
    expires, signature = query(made.link("sub_1", 0, NOW).url)

    assert not made.verify("sub_1", 1, expires, signature, NOW)
    assert not made.verify("sub_2", 0, expires, signature, NOW)


def test_a_link_of_another_secret_is_refused() -> None:
    expires, signature = query(signer(secret=b"t" * 32).link("sub_1", 0, NOW).url)

    assert not signer().verify("sub_1", 0, expires, signature, NOW)


def test_the_expiry_cannot_be_stretched() -> None:
    made = signer()
    expires, signature = query(made.link("sub_1", 0, NOW).url)

    assert not made.verify("sub_1", 0, str(int(expires) + 1), signature, NOW)
    assert not made.verify("sub_1", 0, str(int(expires) + 86400 * 365), signature, NOW)


@pytest.mark.parametrize(
    ("expires", "signature"),
    [
        (None, "sig"),
        ("1900000000", None),
        ("", "sig"),
        ("1900000000", ""),
        ("+1900000000", "sig"),
        (" 1900000000", "sig"),
        ("1.9e9", "sig"),
        ("-1", "sig"),
        ("１９００００００００", "sig"),  # full-width digits, which int() would take
        ("9" * 13, "sig"),
        ("1900000000", "sïgnature"),
        ("1900000000", "\udcff"),  # a lone surrogate, as a broken query decodes
    ],
)
def test_a_missing_or_malformed_query_is_refused_without_an_error(
    expires: str | None, signature: str | None
) -> None:
    assert not signer().verify("sub_1", 0, expires, signature, NOW)


@given(
    submission_id=st.text(min_size=1, max_size=40),
    index=st.integers(min_value=0, max_value=99),
    position=st.integers(min_value=0),
    replacement=st.sampled_from("AQgw-_09"),
)
def test_any_link_verifies_and_any_changed_signature_does_not(
    submission_id: str, index: int, position: int, replacement: str
) -> None:
    made = signer()
    expires, signature = query(made.link(submission_id, index, NOW).url)
    at = position % len(signature)
    changed = signature[:at] + replacement + signature[at + 1 :]

    assert made.verify(submission_id, index, expires, signature, NOW)
    assert made.verify(submission_id, index, expires, changed, NOW) == (changed == signature)


def test_a_short_secret_or_a_lifetime_that_is_not_positive_is_refused() -> None:
    with pytest.raises(ValueError, match="32 bytes"):
        signer(secret=b"s" * 31)
    with pytest.raises(ValueError, match="positive"):
        signer(ttl=timedelta(0))
    with pytest.raises(ValueError, match="positive"):
        signer(ttl=timedelta(seconds=-1))


def test_the_secret_is_not_in_the_repr() -> None:
    assert "sss" not in repr(signer())
