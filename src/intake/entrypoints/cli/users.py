"""`intake user ...`: workspace users of the dashboard, their roles, and their one-time
sign-in links."""

from __future__ import annotations

import argparse

from intake.accounts_runtime import command_accounts
from intake.admin_runtime import AdminRuntime
from intake.domain.users import Role
from intake.entrypoints.cli.output import Output, table
from intake.entrypoints.cli.parser import Subparsers, add_command, add_group
from intake.entrypoints.cli.runner import read_only, with_runtime
from intake.presentation.user_views import user_view


def register(commands: Subparsers) -> None:
    group = add_group(commands, "user", help="manage dashboard users")

    create = add_command(
        group,
        "create",
        help="create a user and print a one-time sign-in link (valid 24 hours)",
        handler=with_runtime(_create),
    )
    create.add_argument("--email", required=True, metavar="EMAIL")
    create.add_argument("--workspace", required=True, metavar="ID")
    create.add_argument(
        "--role",
        choices=[role.value for role in Role],
        default=Role.MEMBER.value,
        help="owner: configures the workspace; member (the default): reads and triages",
    )

    listing = add_command(
        group, "list", help="list users and their workspaces", handler=read_only(_list)
    )
    listing.add_argument("--workspace", metavar="ID", help="only this workspace's members")

    role = add_command(
        group,
        "role",
        help="change a member's role in a workspace; a workspace keeps one owner at least",
        handler=with_runtime(_role),
    )
    role.add_argument("--email", metavar="EMAIL_OR_ID", required=True, dest="user")
    role.add_argument("--workspace", required=True, metavar="ID")
    role.add_argument("--role", choices=[r.value for r in Role], required=True)

    remove = add_command(
        group,
        "remove",
        help="remove a user; their sessions end at once; the last owner of a workspace stays",
        handler=with_runtime(_remove),
    )
    remove.add_argument("--email", metavar="EMAIL_OR_ID", required=True, dest="user")

    link = add_command(
        group,
        "link",
        help="print a one-time link (valid 24 hours) that sets a user's password",
        handler=with_runtime(_link),
    )
    link.add_argument("--email", metavar="EMAIL_OR_ID", required=True, dest="user")


async def _create(runtime: AdminRuntime, args: argparse.Namespace, out: Output) -> None:
    created = await command_accounts(runtime).users.create(
        args.email, args.workspace, Role(args.role)
    )
    # The one place the link is printed: it is kept only as a hash.
    view = {**user_view(created.user, (created.membership,)), "sign_in_link": created.link}
    out.result(
        view,
        [
            f"user {created.user.user_id} created: {created.user.email},"
            f" {created.membership.role.value} of {created.membership.workspace_id}",
            f"sign_in_link={created.link}",
            "it works once, within 24 hours, to choose a password",
        ],
    )


async def _list(runtime: AdminRuntime, args: argparse.Namespace, out: Output) -> None:
    members = await command_accounts(runtime).users.all(args.workspace)
    rows = (
        (
            m.user.user_id,
            m.user.email,
            "yes" if m.user.password_hash is not None else "no",
            " ".join(f"{x.workspace_id}:{x.role.value}" for x in m.memberships),
        )
        for m in members
    )
    lines = table(("USER", "EMAIL", "PASSWORD", "WORKSPACES"), rows) if members else []
    document = {"users": [user_view(m.user, m.memberships) for m in members]}
    out.result(document, lines or ["no users"])


async def _remove(runtime: AdminRuntime, args: argparse.Namespace, out: Output) -> None:
    user = await command_accounts(runtime).users.remove(args.user)
    out.result(user_view(user), [f"user {user.user_id} removed: {user.email}; sessions ended"])


async def _role(runtime: AdminRuntime, args: argparse.Namespace, out: Output) -> None:
    member = await command_accounts(runtime).users.set_role(
        args.workspace, args.user, Role(args.role)
    )
    (membership,) = member.memberships
    out.result(
        user_view(member.user, member.memberships),
        [
            f"user {member.user.user_id} ({member.user.email}) is now"
            f" {membership.role.value} of {membership.workspace_id}"
        ],
    )


async def _link(runtime: AdminRuntime, args: argparse.Namespace, out: Output) -> None:
    # Printed to the operator's terminal only: the link sets the user's password.
    user, link = await command_accounts(runtime).users.password_link(args.user)
    out.result(
        {**user_view(user), "sign_in_link": link},
        [
            f"sign_in_link={link}",
            f"it works once, within 24 hours, to choose the password of {user.email};"
            " give it to them only",
        ],
    )
