"""The variables that say what intake keeps, for how long, and under which key: retention,
client addresses and the key that seals stored secrets (docs/privacy.md). Declared as
variables.py declares the rest, whose table lists them in its order."""

from __future__ import annotations

from intake.config.variable import Variable, choice, integer, sealing_key, sealing_keys
from intake.domain.privacy import DEFAULT_CLIENT_IP_FULL_HOURS, ClientIpStorage
from intake.domain.quota import DEFAULT_SPAM_RETENTION_DAYS

OUTBOX_RETENTION_DAYS = Variable(
    "INTAKE_OUTBOX_RETENTION_DAYS",
    7,
    integer(minimum=0),
    (
        "days `intake purge` keeps an outbox row after it was published (`0`: purge published rows "
        "at once); unpublished rows are always kept"
    ),
)
SPAM_RETENTION_DAYS = Variable(
    "INTAKE_SPAM_RETENTION_DAYS",
    DEFAULT_SPAM_RETENTION_DAYS,
    integer(minimum=0),
    (
        "days `intake purge` keeps spam and unverified submissions, with their files, before "
        "erasing them (`0`: keep them forever); one whose event is not yet delivered is kept "
        "([uploads.md](uploads.md#storage-ceiling-and-spam-retention))"
    ),
)
RETENTION_SWEEP_INTERVAL = Variable(
    "INTAKE_RETENTION_SWEEP_INTERVAL",
    3600,
    integer(minimum=0),
    (
        "seconds between two retention sweeps of `intake relay`, which erase the submissions "
        "past their form's `--retention-days` and cut full client addresses past "
        "`INTAKE_CLIENT_IP_FULL_HOURS` (`0`: the relay leaves both to `intake purge`) "
        "([privacy.md](privacy.md#how-long))"
    ),
)
STORE_CLIENT_IP = Variable(
    "INTAKE_STORE_CLIENT_IP",
    ClientIpStorage.TRUNCATED.value,
    choice(*(storage.value for storage in ClientIpStorage)),
    (
        "what a stored submission keeps of its client's address: `truncated` (its /24 IPv4 or "
        "/48 IPv6 network), `full` or `none`; rate limits count the full address either way, in "
        "memory or Redis only ([privacy.md](privacy.md#client-addresses))"
    ),
)
CLIENT_IP_FULL_HOURS = Variable(
    "INTAKE_CLIENT_IP_FULL_HOURS",
    DEFAULT_CLIENT_IP_FULL_HOURS,
    integer(minimum=1),
    (
        "hours a stored submission keeps its client's full address (`INTAKE_STORE_CLIENT_IP=full`, "
        "or one stored before the setting) before the retention sweep of `intake purge` and "
        "`intake relay` cuts it to its network ([privacy.md](privacy.md#client-addresses))"
    ),
)
SECRET_KEY: Variable[str | None] = Variable(
    "INTAKE_SECRET_KEY",
    None,
    sealing_key,
    (
        "the key that seals the secrets the database keeps (challenge, webhook and download-link "
        "secrets): 32 random bytes in base64url, made by `intake secrets generate-key`, the same "
        "in every process. Required with PostgreSQL "
        "([privacy.md](privacy.md#keys-and-secrets-at-rest))"
    ),
    shown_default=(
        "unset: with SQLite, a key made once in a file beside the database (`intake.db.key`)"
    ),
)
SECRET_KEYS_OLD: Variable[tuple[str, ...]] = Variable(
    "INTAKE_SECRET_KEYS_OLD",
    (),
    sealing_keys,
    (
        "earlier keys, comma-separated: they still open what they sealed until "
        "`intake secrets rotate` has sealed it again under `INTAKE_SECRET_KEY`"
    ),
    shown_default="none",
)
