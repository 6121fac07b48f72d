"""What the `intake` command does before it loads anything else: which command the
arguments choose, and, for a command that runs until a signal stops it (`intake relay`
without `--once`), SIGINT and SIGTERM taken over from the first moment.

Until the relay watches for signals itself, a signal is held here, not obeyed: the
relay, once it starts, stops at once on one held, and exits 0 as it does on a signal
that comes later (docs/relay.md "Stopping"). Without this, a signal that came while it
was still importing or opening its store ended the process, killed by the signal."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
# The commands that run until a signal stops them, less those that run once.
_UNTIL_STOPPED = frozenset({"relay"})
_RUN_ONCE = "--once"


def chosen_command(arguments: list[str]) -> str | None:
    """The command the arguments name, before they are parsed: the options before it
    take no value, so the first other word is the command."""
    for word in arguments:
        if word in ("-h", "--help"):
            return None  # the help lists every command
        if not word.startswith("-"):
            return word
    return None


class HeldSignals:
    """The stop signals that came while nothing else watched for them, in order."""

    def __init__(self) -> None:
        self.received: list[signal.Signals] = []

    def hold(self) -> None:
        """From now until the relay watches for them (again), signals are held here.
        Only the main thread may set handlers: elsewhere, nothing changes."""
        if threading.current_thread() is not threading.main_thread():
            return
        for signum in STOP_SIGNALS:
            signal.signal(signum, self._remember)

    def _remember(self, signum: int, frame: FrameType | None) -> None:
        del frame  # signal.signal's handler signature
        self.received.append(signal.Signals(signum))


HELD = HeldSignals()


@contextmanager
def signals_held(arguments: list[str]) -> Iterator[None]:
    """For a command that runs until stopped, stop signals held (HELD) while it runs,
    and the handlers of before put back after (main may run inside another program)."""
    until_stopped = chosen_command(arguments) in _UNTIL_STOPPED and _RUN_ONCE not in arguments
    if not until_stopped or threading.current_thread() is not threading.main_thread():
        yield
        return
    before = {signum: signal.getsignal(signum) for signum in STOP_SIGNALS}
    HELD.received.clear()
    HELD.hold()
    try:
        yield
    finally:
        for signum, handler in before.items():
            signal.signal(signum, handler)
