"""The argument parser: every command's spelling lives in its own module's `register`."""

from __future__ import annotations

import argparse
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
