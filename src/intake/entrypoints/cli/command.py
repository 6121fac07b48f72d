"""The `intake` command's parser and its run: `run` takes the arguments and returns the
exit code: 0 done, 1 refused (an unknown id, a bad value, a configuration error), 2 a
usage error. It never shows a traceback for bad input; with --json the failure is also
a JSON document on stdout.
"""

from __future__ import annotations

import argparse
import os
import sys
from importlib import import_module

from intake.config import ConfigError, Settings
from intake.domain.errors import StorageUnavailable
from intake.domain.sealing import SealingError
from intake.entrypoints.cli.early import chosen_command
from intake.entrypoints.cli.output import Output
from intake.entrypoints.cli.parser import Parser, UsageError
from intake.entrypoints.cli.runner import (
    CommandError,
    configure_logging,
    warn_of_unknown_variables,
)
from intake.ports.blobs import BlobStoreUnavailable
from intake.ports.store_opening import StoreNotPrepared
from intake.service.admin import AdminError

__all__ = ["run"]

EXIT_OK = 0
EXIT_REFUSED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


# Each command and the module that defines it, in the order --help lists them. A module
# is imported only when its command is chosen (or for --help): what one command needs
# (the HTTP server, the relay's metrics, a driver) is not loaded by another.
COMMANDS = {
    "migrate": "migrate",
    "serve": "serve",
    "relay": "relay",
    "purge": "purge",
    "erase": "erase",
    "workspace": "workspaces",
    "form": "forms",
    "key": "keys",
    "user": "users",
    "submissions": "submissions",
    "spam": "spam",
    "webhook": "webhooks",
    "notify": "notify",
    "destination": "destinations",
    "outbox": "outbox",
    "secrets": "secrets",
    "demo": "demo",
}


def build_parser(chosen: str | None = None) -> Parser:
    """The whole parser, or, for a `chosen` command, the parser with that command alone:
    it parses the same arguments alike."""
    parser = Parser(
        prog="intake",
        description="Manage and run intake, the form submission intake service. "
        "Configuration comes from INTAKE_* environment variables.",
        allow_abbrev=False,
    )
    parser.add_argument("--json", action="store_true", help="print one JSON document on stdout")
    parser.add_argument("--version", action=_Version)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, module in COMMANDS.items():
        if chosen in COMMANDS and name != chosen:
            continue
        import_module(f"{__package__}.{module}").register(commands)
    return parser


class _Version(argparse.Action):
    """argparse's `version` action, reading the installed version only when asked: the
    package metadata takes longer to load than most commands take to run."""

    def __init__(self, option_strings: list[str], dest: str, **kwargs: object) -> None:
        super().__init__(
            option_strings,
            dest,
            nargs=0,
            default=argparse.SUPPRESS,
            help="show program's version number and exit",
        )

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        del namespace, values, option_string  # argparse's signature: only the parser is used
        sys.stdout.write(f"intake {_version()}\n")
        parser.exit()


def _version() -> str:
    from importlib import metadata  # noqa: PLC0415 - only for --version

    try:
        return metadata.version("intake")
    except metadata.PackageNotFoundError:  # run from a source tree, not installed
        return "unknown"


def run(arguments: list[str]) -> int:
    # Looked at before parsing, so that a usage error is answered in JSON too.
    out = Output(json_mode="--json" in arguments)
    try:
        args = build_parser(chosen_command(arguments)).parse_args(arguments)
    except UsageError as error:
        out.stderr.write(error.usage)
        out.error(str(error))
        return EXIT_USAGE
    except SystemExit as done:  # --help and --version
        return done.code if isinstance(done.code, int) else EXIT_OK
    out.json_mode = bool(args.json)
    try:
        settings = Settings.from_env()
        configure_logging(settings)
        warn_of_unknown_variables(os.environ)
        args.handler(args, settings, out)
    except (AdminError, ConfigError, CommandError, SealingError) as error:
        out.error(str(error))
        return EXIT_REFUSED
    except BlobStoreUnavailable as error:
        out.error(f"the blob store is unavailable: {error}")
        return EXIT_REFUSED
    except StoreNotPrepared as error:  # its message says what is missing, and what to run
        out.error(str(error))
        return EXIT_REFUSED
    except StorageUnavailable as error:
        out.error(
            f"the database is unavailable: {error}" if str(error) else "the database is unavailable"
        )
        return EXIT_REFUSED
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader went away (`intake ... | head`): stop quietly, and keep Python from
        # complaining again when it flushes stdout at exit.
        _silence_stdout()
        return EXIT_REFUSED
    return EXIT_OK


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass  # stdout is not a real file (a test's capture): nothing to silence
