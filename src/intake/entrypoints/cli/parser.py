"""The argument parser: every command's spelling lives in its own module's `register`."""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable
from typing import NoReturn, TypeAlias


class UsageError(Exception):
    """The command line itself is wrong (exit 2). Raised instead of argparse's exit so
    that `main` can also answer in JSON and tests can call `main` in-process."""

    def __init__(self, usage: str, message: str) -> None:
        super().__init__(message)
        self.usage = usage


class Parser(argparse.ArgumentParser):
    """Every parser here is made with allow_abbrev=False: `--work` is not `--workspace`,
    so a script keeps its meaning when a flag with the same start is added."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(self.format_usage(), message)


def json_flag() -> Parser:
    """`--json` after the subcommand. SUPPRESS keeps a subparser from resetting the value
    that `--json` before the subcommand already set."""
    parent = Parser(add_help=False, allow_abbrev=False)
    parent.add_argument(
        "--json",
        action="store_true",
        default=argparse.SUPPRESS,
        help="print one JSON document on stdout",
    )
    return parent


def positive_int(raw: str) -> int:
    try:
        value = int(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {raw!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1: {value}")
    return value


def port_number(raw: str) -> int:
    value = positive_int(raw)
    if value > 65535:
        raise argparse.ArgumentTypeError(f"not a TCP port: {value}")
    return value


def whole_number(raw: str) -> int:
    """Any integer; the command checks its range, as it does for other values."""
    try:
        return int(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {raw!r}") from None


def non_negative_int(raw: str) -> int:
    value = whole_number(raw)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must not be negative: {value}")
    return value


# Binary units only: `MB` means 1000² to some and 1024² to others.
_SIZE_UNITS = {"": 1, "b": 1, "kib": 1024, "mib": 1024**2, "gib": 1024**3}
_SIZE = re.compile(r"\s*([0-9]+)\s*([A-Za-z]*)\s*")


def byte_size(raw: str) -> int:
    """Bytes, as a whole number or with a unit: `10485760`, `512KiB`, `10MiB`, `1GiB`."""
    match = _SIZE.fullmatch(raw)
    unit = _SIZE_UNITS.get(match.group(2).lower()) if match else None
    if match is None or unit is None:
        raise argparse.ArgumentTypeError(
            f"not a size: {raw!r} (bytes, or a number with KiB, MiB or GiB)"
        )
    return int(match.group(1)) * unit


def number(raw: str) -> float:
    try:
        return float(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {raw!r}") from None


Subparsers: TypeAlias = "argparse._SubParsersAction[Parser]"


def add_command(
    subparsers: Subparsers,
    name: str,
    *,
    help: str,
    handler: Callable[..., None],
) -> Parser:
    """A subcommand that takes --json and runs `handler(args, settings, output)`."""
    parser = subparsers.add_parser(
        name, help=help, description=help, parents=[json_flag()], allow_abbrev=False
    )
    parser.set_defaults(handler=handler)
    return parser


def add_group(subparsers: Subparsers, name: str, *, help: str) -> Subparsers:
    """A command with commands under it (`intake workspace create`)."""
    parser = subparsers.add_parser(
        name, help=help, description=help, parents=[json_flag()], allow_abbrev=False
    )
    return parser.add_subparsers(dest=f"{name}_command", metavar="COMMAND", required=True)
