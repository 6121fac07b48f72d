"""`intake demo`: a workspace and a form named "demo", and a curl command to try them."""

from __future__ import annotations

import argparse
import json
import shlex

from intake.admin_runtime import AdminRuntime
from intake.domain.model import Form, Workspace
from intake.entrypoints.cli.output import Output
from intake.entrypoints.cli.parser import Subparsers, add_command
from intake.entrypoints.cli.runner import with_runtime
from intake.entrypoints.cli.serve import base_url
from intake.service.admin import Admin, FormChanges, parse_rule

DEMO_NAME = "demo"
SAMPLE = {"email": "you@example.com", "message": "Hello"}


def register(commands: Subparsers) -> None:
    add_command(
        commands,
        "demo",
        help='make sure a workspace and a form named "demo" exist, and show how to submit to it',
        handler=with_runtime(_demo),
    )


async def _demo(runtime: AdminRuntime, args: argparse.Namespace, out: Output) -> None:
    admin = runtime.admin
    workspace = await _workspace(admin)
    form = await _form(admin, workspace)
    settings = runtime.settings
    url = f"{base_url(settings.host, settings.port)}/f/{form.public_form_key}"
    command = curl_command(url)
    out.result(
        {
            "workspace_id": workspace.workspace_id,
            "form_id": form.form_id,
            "public_form_key": form.public_form_key,
            "url": url,
            "curl": command,
        },
        [
            f"demo form {form.form_id} in workspace {workspace.workspace_id}",
            f"public_form_key={form.public_form_key}",
            "start the server with `intake serve`, then submit:",
            command,
        ],
    )


async def _workspace(admin: Admin) -> Workspace:
    # Looked up by name, so running the command again reuses what the first run made.
    found = [w for w in await admin.workspaces() if w.name == DEMO_NAME]
    if not found:
        return await admin.create_workspace(DEMO_NAME)
    workspace = found[0]
    if not workspace.active:  # the curl command must work
        workspace = await admin.set_workspace_active(workspace.workspace_id, True)
    return workspace


async def _form(admin: Admin, workspace: Workspace) -> Form:
    found = [f for f in await admin.forms(workspace.workspace_id) if f.name == DEMO_NAME]
    if not found:
        return await admin.create_form(
            workspace.workspace_id, name=DEMO_NAME, rules=[parse_rule("email:email")]
        )
    form = found[0]
    if not form.enabled:
        form = await admin.update_form(form.form_id, FormChanges(enabled=True))
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
