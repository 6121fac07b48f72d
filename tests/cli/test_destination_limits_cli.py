"""The operator's bounds on a form's destinations hold for `intake` too: one past
INTAKE_MAX_*_PER_FORM is refused, saying why, and adds nothing."""

from __future__ import annotations

import pytest

from tests.cli.conftest import Cli


@pytest.fixture
def form_id(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("INTAKE_MAX_RECIPIENTS_PER_FORM", "1")
    monkeypatch.setenv("INTAKE_MAX_WEBHOOKS_PER_FORM", "1")
    monkeypatch.setenv("INTAKE_MAX_CHAT_DESTINATIONS_PER_FORM", "1")
    workspace = cli.json("workspace", "create", "--name", "Acme")
    created = cli.json("form", "create", "--workspace", workspace["workspace_id"])
    return str(created["form_id"])


@pytest.mark.parametrize(
    ("group", "adds", "variable"),
    [
        (
            "notify",
            (["--email", "a@example.com"], ["--email", "b@example.com"]),
            "INTAKE_MAX_RECIPIENTS_PER_FORM",
        ),
        (
            "webhook",
            (["--url", "https://hooks.example.com/a"], ["--url", "https://hooks.example.com/b"]),
            "INTAKE_MAX_WEBHOOKS_PER_FORM",
        ),
        (
            "destination",
            (
                ["--kind", "slack", "--url", "https://hooks.slack.com/services/T/B/a"],
                ["--kind", "slack", "--url", "https://hooks.slack.com/services/T/B/b"],
            ),
            "INTAKE_MAX_CHAT_DESTINATIONS_PER_FORM",
        ),
    ],
    ids=["recipients", "webhooks", "chats"],
)
def test_one_past_the_operators_bound_is_refused(
    cli: Cli, form_id: str, group: str, adds: tuple[list[str], list[str]], variable: str
) -> None:
    first, second = adds
    cli.json(group, "add", "--form", form_id, *first)

    refused = cli(group, "add", "--form", form_id, *second)
    listed = cli.json(group, "list", "--form", form_id)

    assert refused.code != 0
    assert "this form has 1" in refused.err
    assert variable in refused.err
    [items] = [value for value in listed.values() if isinstance(value, list)]
    assert len(items) == 1
