"""`intake demo`: a workspace and a form named "demo" (the form kept when renamed), a
curl command to try them, and a dashboard user (demo@example.com, an owner of the
workspace) with a one-time sign-in link."""

from __future__ import annotations

import argparse
import json
import shlex
from datetime import UTC, datetime

from intake.accounts_runtime import command_accounts
from intake.admin_runtime import AdminRuntime
from intake.domain.model import Form, Workspace
from intake.domain.users import Role
from intake.entrypoints.cli.output import Output
from intake.entrypoints.cli.parser import Subparsers, add_command
from intake.entrypoints.cli.runner import with_runtime
from intake.entrypoints.cli.serve import base_url
from intake.service.accounts import NewUser
from intake.service.admin import FormChanges, OwnerServices, parse_rule

DEMO_NAME = "demo"
DEMO_EMAIL = "demo@example.com"
SAMPLE = {"email": "you@example.com", "message": "Hello"}


def register(commands: Subparsers) -> None:
    add_command(
        commands,
        "demo",
        help='make sure a workspace and a form named "demo" and a dashboard user exist, and'
        " show how to submit to the form and sign in",
        handler=with_runtime(_demo),
    )


async def _demo(runtime: AdminRuntime, args: argparse.Namespace, out: Output) -> None:
    services = runtime.services
    workspace = await _workspace(services)
    form = await _form(services, workspace)
    demo_user = await command_accounts(runtime).users.ensure(
        DEMO_EMAIL, workspace.workspace_id, Role.OWNER
    )
    settings = runtime.settings
    url = f"{base_url(settings.host, settings.port)}/f/{form.public_form_key}"
    command = curl_command(url)
    # The dashboard is where the sign-in link points: INTAKE_BASE_URL when set.
    dashboard = f"{settings.public_base_url}/dashboard"
    out.result(
        {
            "workspace_id": workspace.workspace_id,
            "form_id": form.form_id,
            "public_form_key": form.public_form_key,
            "url": url,
            "curl": command,
            "dashboard_url": dashboard,
            "sign_in_url": f"{dashboard}/sign-in",
            "user_id": demo_user.user.user_id,
            "user_email": demo_user.user.email,
            # None once the user has a password: a link would reset it.
            "sign_in_link": demo_user.link,
        },
        [
            f"demo form {form.form_id} in workspace {workspace.workspace_id}",
            f"public_form_key={form.public_form_key}",
            *_dashboard_lines(dashboard, demo_user),
            "start the server with `intake serve`, then submit:",
            command,
        ],
    )


def _dashboard_lines(dashboard: str, demo_user: NewUser) -> list[str]:
    email = demo_user.user.email
    role = demo_user.membership.role.value
    lines = [f"dashboard: {dashboard} (user {email}, {role} of the demo workspace)"]
    if demo_user.link is None:
        return [
            *lines,
            f"{email} has a password already: sign in at {dashboard}/sign-in",
            f"(forgotten? `intake user link --email {email}` prints a link to choose another)",
        ]
    return [
        *lines,
        f"sign_in_link={demo_user.link}",
        f"it works once, within 24 hours, to choose the password of {email}",
    ]


async def _workspace(services: OwnerServices) -> Workspace:
    # Looked up by name (a workspace's name never changes), so running the command
    # again reuses what the first run made.
    found = [w for w in await services.workspaces.all() if w.name == DEMO_NAME]
    if not found:
        return await services.workspaces.create(DEMO_NAME)
    workspace = found[0]
    if not workspace.active:  # the curl command must work
        workspace = await services.workspaces.set_active(workspace.workspace_id, True)
    return workspace


async def _form(services: OwnerServices, workspace: Workspace) -> Form:
    """The demo workspace's form named "demo", else its first form: a form's name is
    the owner's to change, and a renamed demo form is still the demo's, never doubled.
    A new one only in a workspace with no form at all."""
    forms = sorted(
        await services.forms.all(workspace.workspace_id),
        key=lambda f: (f.name != DEMO_NAME, f.created_at or datetime.min.replace(tzinfo=UTC)),
    )
    if not forms:
        return await services.forms.create(
            workspace.workspace_id, name=DEMO_NAME, rules=[parse_rule("email:email")]
        )
    form = forms[0]
    if not form.enabled:
        form = await services.forms.update(form.form_id, FormChanges(enabled=True))
    return form


def curl_command(url: str) -> str:
    body = json.dumps(SAMPLE, separators=(",", ":"))
    return " ".join(
        [
            "curl -i",
            shlex.quote(url),
            "-H",
            shlex.quote("Content-Type: application/json"),
            "-d",
            shlex.quote(body),
        ]
    )
