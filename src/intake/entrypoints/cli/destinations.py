"""`intake destination ...`: a form's chat destinations (Slack, Discord, Microsoft Teams
incoming webhooks, a Telegram bot and chat)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from intake.admin_runtime import AdminRuntime
from intake.domain.chat import ChatApp
from intake.entrypoints.cli.output import Output, key_values, table
from intake.entrypoints.cli.parser import Subparsers, add_command, add_group
from intake.entrypoints.cli.runner import CommandError, read_only, with_runtime
from intake.presentation.chat_views import chat_view
from intake.presentation.views import delivery_record_view
from intake.service.admin import ChatRequest

# A bot token is a few dozen characters; a file much larger is not one.
_MAX_TOKEN_FILE_BYTES = 4096


def register(commands: Subparsers) -> None:
    group = add_group(commands, "destination", help="manage a form's chat destinations")

    add = add_command(
        group,
        "add",
        help="add a chat destination; its URL or token is never shown again",
        handler=with_runtime(_add),
    )
    add.add_argument("--form", required=True, metavar="ID")
    add.add_argument("--kind", required=True, choices=[app.value for app in ChatApp])
    add.add_argument(
        "--url", metavar="URL", help="the incoming-webhook URL (slack, discord, teams)"
    )
    add.add_argument(
        "--telegram-token-file",
        metavar="PATH",
        help="a file holding the bot's token (telegram); `-` reads it from standard input",
    )
    add.add_argument("--telegram-chat-id", metavar="ID", help="the chat: a number or @channel")
    add.add_argument(
        "--include-flagged",
        action="store_true",
        help="also post spam and unverified submissions (marked as flagged)",
    )

    listing = add_command(
        group, "list", help="list a form's chat destinations", handler=read_only(_list)
    )
    listing.add_argument("--form", required=True, metavar="ID")

    remove = add_command(
        group,
        "remove",
        help="remove a chat destination; its undelivered messages are dropped",
        handler=with_runtime(_remove),
    )
    remove.add_argument("destination_id", metavar="DESTINATION_ID")

    test = add_command(
        group,
        "test",
        help="queue a test message to this destination only (the relay sends it)",
        handler=with_runtime(_test),
    )
    test.add_argument("destination_id", metavar="DESTINATION_ID")


def _token(path: str | None) -> str | None:
    """The bot token read from a file (or standard input): a token given on the command
    line would be seen by every user of the machine and kept in the shell's history."""
    if path is None:
        return None
    try:
        if path == "-":
            raw = sys.stdin.read(_MAX_TOKEN_FILE_BYTES + 1)
        else:
            with Path(path).open(encoding="utf-8") as file:
                raw = file.read(_MAX_TOKEN_FILE_BYTES + 1)
    except (OSError, UnicodeDecodeError) as error:
        raise CommandError(f"cannot read the token file: {type(error).__name__}") from None
    if len(raw) > _MAX_TOKEN_FILE_BYTES:
        raise CommandError("the token file is too large to hold a bot token")
    return raw.strip()


async def _add(runtime: AdminRuntime, args: argparse.Namespace, out: Output) -> None:
    request = ChatRequest(
        kind=args.kind,
        url=args.url,
        telegram_token=_token(args.telegram_token_file),
        telegram_chat_id=args.telegram_chat_id,
        include_flagged=args.include_flagged,
    )
    destination = await runtime.services.chats.add(args.form, request)
    view = chat_view(destination)
    out.result(view, [f"chat destination {destination.destination_id} added", *key_values(view)])


async def _list(runtime: AdminRuntime, args: argparse.Namespace, out: Output) -> None:
    chats = await runtime.services.chats.all(args.form)
    rows = (
        (
            c.destination_id,
            c.app.value,
            "created+flagged" if c.include_flagged else "created",
            c.shown_target,
        )
        for c in chats
    )
    lines = table(("DESTINATION", "KIND", "EVENTS", "TARGET"), rows) if chats else []
    out.result({"destinations": [chat_view(c) for c in chats]}, lines or ["no chat destinations"])


async def _remove(runtime: AdminRuntime, args: argparse.Namespace, out: Output) -> None:
    await runtime.services.chats.remove(args.destination_id)
    out.result(
        {"destination_id": args.destination_id, "removed": True},
        [f"chat destination {args.destination_id} removed"],
    )


async def _test(runtime: AdminRuntime, args: argparse.Namespace, out: Output) -> None:
    record = await runtime.services.chats.test(args.destination_id)
    out.result(
        delivery_record_view(record),
        [
            f"chat.test queued to {args.destination_id}: delivery {record.delivery.delivery_id}",
            "the relay sends it on its next round (intake outbox list shows the result)",
        ],
    )
