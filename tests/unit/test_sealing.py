"""Secrets sealed at rest (domain/sealing.py, adapters/sealing.py): a sealed value opens
only with its key and only in its place; a key file is made once, its owner's only."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from intake.adapters.sealing import AeadSealer, generate_key, key_id
from intake.adapters.sqlite.key_file import embedded_sealer, key_file_beside, key_file_key
from intake.config import ConfigError, Settings
from intake.domain.sealing import (
    SEALED_PREFIX,
    SealedPlace,
    SealingError,
    SecretKeyError,
    is_sealed,
    parse_key,
    sealed_key_id,
)
from intake.resources import sealer_for

PLACE = SealedPlace("forms", "challenge_secret", "frm_1")
SECRET = "0x4AAAAAAA-turnstile-secret"


def test_a_sealed_value_names_its_key_and_opens_in_its_place() -> None:
    sealer = AeadSealer.from_keys(generate_key())

    sealed = sealer.seal_text(SECRET, PLACE)

    assert is_sealed(sealed)
    assert sealed.startswith(SEALED_PREFIX)
    assert sealed_key_id(sealed) == sealer.key_id
    assert SECRET not in sealed
    assert sealer.open_text(sealed, PLACE) == SECRET
    # A random nonce each time: the same secret never seals to the same text.
    assert sealer.seal_text(SECRET, PLACE) != sealed


@pytest.mark.parametrize(
    "elsewhere",
    [
        SealedPlace("forms", "challenge_secret", "frm_2"),  # another row
        SealedPlace("webhook_endpoints", "secret", "frm_1"),  # another table and column
        SealedPlace("forms", "name", "frm_1"),  # another column of the same row
    ],
)
def test_a_sealed_value_moved_to_another_place_does_not_open(elsewhere: SealedPlace) -> None:
    sealer = AeadSealer.from_keys(generate_key())
    sealed = sealer.seal_text(SECRET, PLACE)

    with pytest.raises(SealingError, match="changed or moved") as refused:
        sealer.open_text(sealed, elsewhere)
    assert SECRET not in str(refused.value)


def test_a_changed_value_does_not_open() -> None:
    sealer = AeadSealer.from_keys(generate_key())
    sealed = sealer.seal_text(SECRET, PLACE)
    body = sealed.rsplit(":", 1)[1]
    flipped = body[:10] + ("A" if body[10] != "A" else "B") + body[11:]

    with pytest.raises(SealingError):
        sealer.open_text(sealed.rsplit(":", 1)[0] + ":" + flipped, PLACE)
    with pytest.raises(SealingError):
        sealer.open_text(sealed[:-4], PLACE)  # cut short
    with pytest.raises(SealingError):
        sealer.open_text(sealed.rsplit(":", 1)[0] + ":!!not base64!!", PLACE)


def test_a_value_under_a_key_not_configured_does_not_open_and_says_which() -> None:
    one, other = AeadSealer.from_keys(generate_key()), AeadSealer.from_keys(generate_key())
    sealed = one.seal_text(SECRET, PLACE)

    with pytest.raises(SealingError, match=f"key {one.key_id}, which is not configured"):
        other.open_text(sealed, PLACE)


def test_a_forged_key_id_does_not_open_with_another_key() -> None:
    sealer = AeadSealer.from_keys(generate_key())
    sealed = AeadSealer.from_keys(generate_key()).seal_text(SECRET, PLACE)
    forged = SEALED_PREFIX + sealer.key_id + ":" + sealed.rsplit(":", 1)[1]

    with pytest.raises(SealingError, match="changed or moved"):
        sealer.open_text(forged, PLACE)


def test_an_old_key_opens_what_it_sealed_and_the_current_key_seals() -> None:
    old_key, new_key = generate_key(), generate_key()
    before = AeadSealer.from_keys(old_key).seal_text(SECRET, PLACE)

    rotating = AeadSealer.from_keys(new_key, [old_key])

    assert rotating.open_text(before, PLACE) == SECRET
    assert sealed_key_id(rotating.seal_text(SECRET, PLACE)) == key_id(parse_key(new_key))
    with pytest.raises(SealingError):
        AeadSealer.from_keys(new_key).open_text(before, PLACE)


def test_a_plain_value_from_an_older_version_reads_as_it_is() -> None:
    sealer = AeadSealer.from_keys(generate_key())

    assert sealer.open_text(SECRET, PLACE) == SECRET
    assert sealer.open(b"\x00\xff".decode("latin-1"), PLACE) == "\x00\xff".encode()


@pytest.mark.parametrize("text", ["", "short", "a" * 43 + "!", "QUJD" * 10 + "QQ", "x" * 200])
def test_a_key_that_is_not_32_bytes_of_base64url_is_refused_without_showing_it(
    text: str,
) -> None:
    with pytest.raises(SecretKeyError) as refused:
        parse_key(text)
    assert not text or text not in str(refused.value)


def test_a_generated_key_is_32_random_bytes() -> None:
    keys = {generate_key() for _ in range(20)}

    assert len(keys) == 20
    assert all(len(parse_key(key)) == 32 and len(key) == 43 for key in keys)


def test_the_settings_refuse_a_bad_key_naming_the_variable_only() -> None:
    with pytest.raises(ConfigError, match="INTAKE_SECRET_KEY") as refused:
        Settings.from_env({"INTAKE_SECRET_KEY": "not-a-key-at-all"})
    assert "not-a-key-at-all" not in str(refused.value)
    with pytest.raises(ConfigError, match="INTAKE_SECRET_KEYS_OLD"):
        Settings.from_env({"INTAKE_SECRET_KEYS_OLD": f"{generate_key()},nope"})

    one, two = generate_key(), generate_key()
    settings = Settings.from_env({"INTAKE_SECRET_KEYS_OLD": f" {one} , {two} ,"})
    assert settings.secret_keys_old == (one, two)
    assert one not in repr(settings)


def test_postgres_without_a_key_is_refused_in_one_line_saying_how_to_make_one() -> None:
    settings = Settings(database_url="postgresql://db.internal/intake")

    with pytest.raises(ConfigError) as refused:
        sealer_for(settings)

    message = str(refused.value)
    assert "INTAKE_SECRET_KEY" in message
    assert "intake secrets generate-key" in message
    assert "\n" not in message


def test_postgres_with_a_key_seals_under_it_and_opens_with_the_old_ones() -> None:
    old, new = generate_key(), generate_key()
    sealed = AeadSealer.from_keys(old).seal_text(SECRET, PLACE)
    settings = Settings(
        database_url="postgresql://db.internal/intake", secret_key=new, secret_keys_old=(old,)
    )

    sealer = sealer_for(settings)

    assert sealer.key_id == key_id(parse_key(new))
    assert sealer.open_text(sealed, PLACE) == SECRET


def test_sqlite_makes_a_key_file_beside_the_database_for_its_owner_only(tmp_path: Path) -> None:
    database = tmp_path / "data" / "intake.db"
    previous = os.umask(0o022)  # what a shell leaves: files readable by all unless made so
    try:
        first = embedded_sealer(str(database))
        again = embedded_sealer(str(database))
    finally:
        os.umask(previous)

    path = key_file_beside(str(database))
    assert path == tmp_path / "data" / "intake.db.key"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert first.key_id == again.key_id
    assert [p.name for p in path.parent.iterdir()] == ["intake.db.key"]  # no draft left


def test_processes_racing_to_make_the_key_file_agree_on_one_key(tmp_path: Path) -> None:
    path = tmp_path / "intake.db.key"
    found: list[str] = []
    barrier = threading.Barrier(8)

    def make() -> None:
        barrier.wait()
        found.append(key_file_key(path))

    threads = [threading.Thread(target=make) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert len(set(found)) == 1
    assert path.read_text().strip() == found[0]


def test_a_configured_key_seals_and_the_key_file_still_opens_what_it_sealed(
    tmp_path: Path,
) -> None:
    database = str(tmp_path / "intake.db")
    before = embedded_sealer(database).seal_text(SECRET, PLACE)
    configured = generate_key()

    sealer = embedded_sealer(database, configured)

    assert sealer.key_id == key_id(parse_key(configured))
    assert sealer.open_text(before, PLACE) == SECRET


def test_a_damaged_key_file_is_named_and_its_content_never_shown(tmp_path: Path) -> None:
    database = tmp_path / "intake.db"
    key_file_beside(str(database)).write_text("garbage-that-is-no-key\n")

    with pytest.raises(ConfigError, match=r"intake\.db\.key") as refused:
        sealer_for(Settings(database_url=f"sqlite:///{database}"))
    assert "garbage" not in str(refused.value)
