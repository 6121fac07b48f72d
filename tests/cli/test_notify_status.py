"""`intake notify` shows each recipient's consent: the operator's own add is confirmed
(the operator vouches for the address), and the listing says so, as JSON and as text."""

from __future__ import annotations

from tests.cli.conftest import Cli


def test_the_operators_recipient_is_confirmed_and_listed_with_its_status(cli: Cli) -> None:
    workspace = cli.json("workspace", "create", "--name", "Acme")
    form = cli.json("form", "create", "--workspace", workspace["workspace_id"])

    added = cli.json("notify", "add", "--form", form["form_id"], "--email", "ops@example.com")
    listed = cli.json("notify", "list", "--form", form["form_id"])
    shown = cli("notify", "list", "--form", form["form_id"])

    assert added["status"] == "confirmed"
    assert [r["status"] for r in listed["recipients"]] == ["confirmed"]
    assert "STATUS" in shown.out
    assert "confirmed" in shown.out
