"""`intake workspace ...`: create, show, list, suspend and activate workspaces."""

from __future__ import annotations

import argparse

from intake.admin_runtime import AdminRuntime
from intake.domain.model import Plan
from intake.domain.quota import storage_ceiling
from intake.entrypoints.cli.output import Output, key_values, table
from intake.entrypoints.cli.parser import Subparsers, add_command, add_group, byte_size
from intake.entrypoints.cli.runner import CommandError, read_only, with_runtime
from intake.presentation.views import workspace_usage_view, workspace_view
from intake.service.admin import UNSET, Unset, WorkspaceChanges

_PLANS = [plan.value for plan in Plan]


def register(commands: Subparsers) -> None:
    group = add_group(commands, "workspace", help="manage workspaces")

    create = add_command(group, "create", help="create a workspace", handler=with_runtime(_create))
    create.add_argument("--name", required=True)
    create.add_argument("--plan", choices=_PLANS, default=Plan.FREE.value)
    create.add_argument(
        "--monthly-limit",
        type=int,
        metavar="N",
        help="the workspace's own monthly limit, instead of its plan's",
    )
    create.add_argument(
        "--storage-limit",
        type=byte_size,
        metavar="SIZE",
        help="bytes of files it may keep, e.g. 5GiB, instead of INTAKE_WORKSPACE_STORAGE_LIMIT",
    )

    update = add_command(
        group, "update", help="change a workspace's plan or limits", handler=with_runtime(_update)
    )
    update.add_argument("workspace_id", metavar="ID")
    update.add_argument("--plan", choices=_PLANS)
    limit = update.add_mutually_exclusive_group()
    limit.add_argument("--monthly-limit", type=int, metavar="N")
    limit.add_argument(
        "--no-monthly-limit",
        action="store_true",
        help="drop the workspace's own limit, so its plan's applies",
    )
    storage = update.add_mutually_exclusive_group()
    storage.add_argument("--storage-limit", type=byte_size, metavar="SIZE")
    storage.add_argument(
        "--no-storage-limit",
        action="store_true",
        help="drop the workspace's own storage limit: INTAKE_WORKSPACE_STORAGE_LIMIT applies",
    )

    for name, verb, handler in (
        ("suspend", "suspend a workspace: its forms refuse submissions", with_runtime(_suspend)),
        ("activate", "activate a suspended workspace", with_runtime(_activate)),
        ("show", "show a workspace and this month's usage", read_only(_show)),
    ):
        command = add_command(group, name, help=verb, handler=handler)
        command.add_argument("workspace_id", metavar="ID")

    add_command(group, "list", help="list every workspace", handler=read_only(_list))


async def _create(runtime: AdminRuntime, args: argparse.Namespace, out: Output) -> None:
    if not args.name.strip():
        raise CommandError("--name cannot be empty")
    workspace = await runtime.services.workspaces.create(
        args.name,
        Plan(args.plan),
        monthly_limit=args.monthly_limit,
        storage_limit=args.storage_limit,
    )
    view = workspace_view(workspace)
    out.result(view, [f"workspace {workspace.workspace_id} created", *key_values(view)])


async def _update(runtime: AdminRuntime, args: argparse.Namespace, out: Output) -> None:
    services = runtime.services
    plan = Plan(args.plan) if args.plan is not None else None
    monthly_limit: int | Unset | None = UNSET
    if args.no_monthly_limit:
        monthly_limit = None
    elif args.monthly_limit is not None:
        if args.monthly_limit < 0:
            raise CommandError("a monthly limit cannot be negative")
        monthly_limit = args.monthly_limit
    storage_limit: int | Unset | None = UNSET
    if args.no_storage_limit:
        storage_limit = None
    elif args.storage_limit is not None:
        storage_limit = args.storage_limit
    changes = WorkspaceChanges(plan, monthly_limit=monthly_limit, storage_limit=storage_limit)
    workspace = await services.workspaces.update(args.workspace_id, changes)
    view = workspace_view(workspace)
    out.result(view, [f"workspace {workspace.workspace_id} updated", *key_values(view)])


async def _set_active(
    runtime: AdminRuntime, args: argparse.Namespace, out: Output, active: bool
) -> None:
    workspace = await runtime.services.workspaces.set_active(args.workspace_id, active)
    view = workspace_view(workspace)
    state = "active" if active else "suspended"
    out.result(view, [f"workspace {workspace.workspace_id} {state}"])


async def _suspend(runtime: AdminRuntime, args: argparse.Namespace, out: Output) -> None:
    await _set_active(runtime, args, out, active=False)


async def _activate(runtime: AdminRuntime, args: argparse.Namespace, out: Output) -> None:
    await _set_active(runtime, args, out, active=True)


async def _show(runtime: AdminRuntime, args: argparse.Namespace, out: Output) -> None:
    usage = await runtime.services.workspaces.usage(args.workspace_id)
    view = workspace_view(usage.workspace)
    storage_limit = storage_ceiling(usage.workspace, runtime.settings.workspace_storage_limit)
    out.result(
        workspace_usage_view(usage, storage_limit),
        [
            *key_values(view),
            f"usage={usage.used}/{usage.ceiling} in {usage.period}",
            f"storage={usage.storage_used}/{storage_limit} bytes",
            *(
                f"form {form.form_id}: used={form.used} honeypot_hits={form.honeypot_hits}"
                for form in usage.forms
            ),
        ],
    )


async def _list(runtime: AdminRuntime, args: argparse.Namespace, out: Output) -> None:
    workspaces = await runtime.services.workspaces.all()
    views = [workspace_view(w) for w in workspaces]
    rows = (
        (w.workspace_id, "active" if w.active else "suspended", w.plan.value, w.name)
        for w in workspaces
    )
    lines = table(("WORKSPACE", "STATE", "PLAN", "NAME"), rows) if workspaces else []
    out.result({"workspaces": views}, lines or ["no workspaces"])
