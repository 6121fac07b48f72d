"""intake: a self-hostable form submission intake service.

Library use::

    async with Intake.open(database_url="sqlite:///intake.db") as intake:
        workspace = await intake.admin.create_workspace("Acme")
        form = await intake.admin.create_form(workspace.workspace_id, name="Contact")
        result = await intake.submit(form.public_form_key, {"email": "a@example.com"})
"""

from intake.config import Settings
from intake.entrypoints.library import Intake, SubmissionResult, SyncIntake

__all__ = ["Intake", "Settings", "SubmissionResult", "SyncIntake"]
