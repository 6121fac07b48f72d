"""bogofilter (Debian's package), learning online from the same texts: each message is
classified (`-TT`: its spamicity to 16 digits), then taught its true label (`-s`/`-n`):
every one in the full mode; in the errors mode only those it did not get right at its own
cutoffs, as its documentation advises training: a spam below its spam cutoff, a ham at or
above its ham cutoff (its "unsure" band counts as a mistake both ways; without it a filter
that has seen no ham never flags anything, and so is never corrected). Its database lives
in a temporary folder of the run's own (`-d`)."""

from __future__ import annotations

import subprocess
import tempfile
import threading
from collections.abc import Callable, Sequence
from email.header import Header
from pathlib import Path

from bench.debian import command_from_debian
from bench.spam.corpus import Mail
from bench.spam.metrics import Scored
from bench.spam.modes import Mode

DEFAULT_CUTOFFS = {"spam_cutoff": 0.99, "ham_cutoff": 0.45}  # when `-Q` does not say
NOTHING_KNOWN = 0.5
# A call's time limit: bogofilter answers in milliseconds; one that hangs is broken.
CALL_TIMEOUT = 60


class BogofilterError(RuntimeError):
    """bogofilter could not be installed or run."""


def find_bogofilter() -> str:
    """bogofilter on PATH, installed from Debian's packages when missing and we may."""
    found = command_from_debian("bogofilter", "bogofilter")
    if found:
        return found
    raise BogofilterError(
        "bogofilter is not installed and cannot be installed here: install it "
        "(Debian/Ubuntu: apt-get install bogofilter) and run the bench again"
    )


def rfc822(mail: Mail) -> bytes:
    """The submission as a minimal mail, so that bogofilter reads what intake reads:
    Subject (RFC 2047 when not ASCII), From (when the submission has an address), and
    the message as a UTF-8 text body."""
    subject = mail.subject.replace("\r", " ").replace("\n", " ")
    if not subject.isascii():
        subject = Header(subject, "utf-8").encode()
    lines = [f"Subject: {subject}"]
    if mail.email is not None:
        lines.append(f"From: {mail.email}")
    lines += [
        "MIME-Version: 1.0",
        "Content-Type: text/plain; charset=utf-8",
        "Content-Transfer-Encoding: 8bit",
        "",
        mail.message,
    ]
    return "\n".join(lines).encode("utf-8", "surrogatepass")


def cutoffs(command: str) -> dict[str, float]:
    """bogofilter's configured cutoffs, as `bogofilter -Q` reports them."""
    done = subprocess.run(
        [command, "-Q"], capture_output=True, text=True, timeout=CALL_TIMEOUT, check=False
    )
    found = dict(DEFAULT_CUTOFFS)
    for line in done.stdout.splitlines():
        name, _, rest = line.partition("=")
        if name.strip() in found:
            found[name.strip()] = float(rest.split("#")[0])
    return found


class Bogofilter:
    """One bogofilter database, taught online."""

    def __init__(self, command: str, directory: Path) -> None:
        self._command = command
        self._directory = directory
        configured = cutoffs(command)
        self.spam_cutoff = configured["spam_cutoff"]
        self.ham_cutoff = configured["ham_cutoff"]

    def wrong(self, spamicity: float, *, spam: bool) -> bool:
        """Whether a verdict is one the errors mode corrects (the unsure band included)."""
        return spamicity < self.spam_cutoff if spam else spamicity >= self.ham_cutoff

    def _call(self, options: Sequence[str], mail: bytes) -> str:
        done = subprocess.run(
            [self._command, "-d", str(self._directory), "--db-transaction=no", *options],
            input=mail,
            capture_output=True,
            timeout=CALL_TIMEOUT,
            check=False,
        )
        # Classifying exits 0 (spam), 1 (ham) or 2 (unsure); 3 is an error.
        if done.returncode not in (0, 1, 2):
            raise BogofilterError(
                f"bogofilter {' '.join(options)} exited {done.returncode}: "
                f"{done.stderr.decode(errors='replace').strip()[-300:]}"
            )
        return done.stdout.decode()

    def spamicity(self, mail: bytes) -> float:
        if not (self._directory / "wordlist.db").exists():
            return NOTHING_KNOWN  # bogofilter refuses to classify before its first lesson
        return float(self._call(["-TT"], mail).split()[0])

    def teach(self, mail: bytes, *, spam: bool) -> None:
        self._call(["-s" if spam else "-n"], mail)


def run(
    command: str,
    mails: Sequence[Mail],
    mode: Mode,
    progress: Callable[[int], None],
    stop: threading.Event,
) -> list[Scored]:
    """Each mail classified then taught, in order; its score and verdict for each.
    Ends early, with what it has, once `stop` is set."""
    results: list[Scored] = []
    # A folder in memory where there is one: bogofilter writes its database per message.
    scratch = "/dev/shm" if Path("/dev/shm").is_dir() else None  # noqa: S108 - our own folder
    with tempfile.TemporaryDirectory(prefix="bench-bogofilter-", dir=scratch) as folder:
        filter_ = Bogofilter(command, Path(folder))
        for index, mail in enumerate(mails):
            if stop.is_set():
                break
            text = rfc822(mail)
            score = filter_.spamicity(text)
            results.append(Scored(mail.spam, score, score >= filter_.spam_cutoff))
            if mode is Mode.FULL or filter_.wrong(score, spam=mail.spam):
                filter_.teach(text, spam=mail.spam)
            progress(index + 1)
    return results
