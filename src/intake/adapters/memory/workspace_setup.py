"""A workspace's setup in the in-memory store (WorkspaceRepository.setup), as the SQL
stores' one query finds it: through its live forms."""

from __future__ import annotations

from intake.adapters.memory.tables import Tables
from intake.ports.workspaces import WorkspaceSetup


def setup(tables: Tables, workspace_id: str) -> WorkspaceSetup:
    forms = {
        f.form_id
        for f in tables.forms.values()
        if f.workspace_id == workspace_id and f.form_id not in tables.deleted_forms
    }
    destinations = [
        *(e.form_id for e in tables.endpoints.values()),
        *(r.form_id for r in tables.recipients.values()),
        *(c.form_id for c in tables.chats.values()),
    ]
    return WorkspaceSetup(
        has_form=bool(forms),
        has_submission=any(s.form_id in forms for s in tables.submissions.values()),
        has_destination=any(form_id in forms for form_id in destinations),
    )
