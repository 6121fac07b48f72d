"""intake: a self-hostable form submission intake service.

Library use::

    async with Intake.open(database_url="sqlite:///intake.db") as intake:
        workspace = await intake.workspaces.create("Acme")
        form = await intake.forms.create(workspace.workspace_id, name="Contact")
        result = await intake.submit(form.public_form_key, {"email": "a@example.com"})
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from intake.config import Settings
    from intake.entrypoints.library import Intake, SubmissionResult, SyncIntake

__all__ = ["Intake", "Settings", "SubmissionResult", "SyncIntake"]

# Where each name is defined. They are imported on first use, so that a process that
# only needs a part of intake (the `intake` command) does not load the rest.
_HOMES = {
    "Intake": "intake.entrypoints.library",
    "Settings": "intake.config",
    "SubmissionResult": "intake.entrypoints.library",
    "SyncIntake": "intake.entrypoints.library",
}


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module 'intake' has no attribute {name!r}")
    from importlib import import_module  # noqa: PLC0415

    value = getattr(import_module(_HOMES[name]), name)
    globals()[name] = value
    return value
