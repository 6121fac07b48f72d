"""The `intake` command line: management, migrations, the server and the relay.

`main` takes the arguments and returns the exit code (command.py). It loads nothing
before it has taken over the signals of a command that runs until stopped (early.py):
a SIGTERM that comes while the relay is still loading or opening its store stops it
cleanly, as one that comes later does.
"""

from __future__ import annotations

import sys

from intake.entrypoints.cli.early import signals_held

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    arguments = sys.argv[1:] if argv is None else list(argv)
    with signals_held(arguments):
        # Loaded only now: the command line's modules take a while on a busy machine.
        from intake.entrypoints.cli.command import run  # noqa: PLC0415

        return run(arguments)
