"""`intake key ...`: secret API keys for the server-side endpoint and the management API."""

from __future__ import annotations

import argparse

from intake.admin_runtime import AdminRuntime
from intake.domain.model import SUBMIT_ONLY, Scope
from intake.entrypoints.cli.output import Output, key_values, table
from intake.entrypoints.cli.parser import Subparsers, add_command, add_group
from intake.entrypoints.cli.runner import read_only, with_runtime
from intake.presentation.views import created_key_view, key_view


def register(commands: Subparsers) -> None:
    group = add_group(commands, "key", help="manage secret API keys")

    create = add_command(
        group,
        "create",
        help="create an API key; its secret is shown this once",
        handler=with_runtime(_create),
    )
    create.add_argument("--workspace", required=True, metavar="ID")
    create.add_argument(
        "--scope",
        action="append",
        choices=[scope.value for scope in Scope],
        dest="scopes",
        help="what the key may do (repeatable): submit (the default), read, manage",
    )

    revoke = add_command(group, "revoke", help="revoke an API key", handler=with_runtime(_revoke))
    revoke.add_argument("key_id", metavar="KEY_ID")

    listing = add_command(
        group, "list", help="list a workspace's API keys", handler=read_only(_list)
    )
    listing.add_argument("--workspace", required=True, metavar="ID")


async def _create(runtime: AdminRuntime, args: argparse.Namespace, out: Output) -> None:
    scopes = frozenset(Scope(name) for name in args.scopes) if args.scopes else SUBMIT_ONLY
    created = await runtime.services.keys.create(args.workspace, scopes=scopes)
    # The one place a secret is printed: it is kept only as a hash from here on.
    out.result(
        created_key_view(created),
        [
            f"key {created.key.key_id} created",
            f"api_key={created.secret}",
            "store it now: it is not shown again",
        ],
    )


async def _revoke(runtime: AdminRuntime, args: argparse.Namespace, out: Output) -> None:
    key = await runtime.services.keys.revoke(args.key_id)
    out.result(key_view(key), [f"key {key.key_id} revoked", *key_values(key_view(key))])


async def _list(runtime: AdminRuntime, args: argparse.Namespace, out: Output) -> None:
    keys = await runtime.services.keys.all(args.workspace)
    rows = (
        (
            k.key_id,
            k.prefix + "...",
            "revoked" if k.revoked else "active",
            key_view(k)["scopes"],
            k.created_at.isoformat(),
        )
        for k in keys
    )
    lines = table(("KEY", "PREFIX", "STATE", "SCOPES", "CREATED"), rows) if keys else []
    out.result({"keys": [key_view(k) for k in keys]}, lines or ["no API keys"])
