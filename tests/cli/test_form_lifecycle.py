"""`intake form duplicate` and `intake form delete`: a copy with the original's settings
and none of its submissions; a deletion that erases the form's submissions, asked for
by the form's name at a terminal, refused without one unless `--yes` says so."""

from __future__ import annotations

import io

import pytest
from starlette.testclient import TestClient

from tests.cli.conftest import Cli, submit


class Terminal(io.StringIO):
    """What a person types at a terminal."""

    def isatty(self) -> bool:
        return True


@pytest.fixture
def form(cli: Cli) -> dict[str, object]:
    workspace_id = cli.json("workspace", "create", "--name", "Acme")["workspace_id"]
    return cli.json(
        "form", "create", "--workspace", workspace_id, "--name", "Contact",
        "--rule", "message:required", "--spam-threshold", "3.5",
        "--redirect-url", "https://example.com/thanks",
    )  # fmt: skip


def test_a_duplicate_has_the_settings_and_a_key_of_its_own(
    cli: Cli, form: dict[str, object]
) -> None:
    copy = cli.json("form", "duplicate", str(form["form_id"]))

    assert copy["form_id"] != form["form_id"]
    assert copy["public_form_key"] != form["public_form_key"]
    assert copy["name"] == "Contact (copy)"
    for setting in ("allowed_origins", "spam_threshold", "redirect_url", "mode", "rules"):
        assert copy[setting] == form[setting], setting
    named = cli.json("form", "duplicate", str(form["form_id"]), "--name", "Careers")
    assert named["name"] == "Careers"
    assert cli("form", "duplicate", "frm_missing").code == 1


def test_delete_with_yes_erases_the_submissions_and_the_form_is_gone(
    cli: Cli, form: dict[str, object], http: TestClient
) -> None:
    form_id = str(form["form_id"])
    submission_id = submit(http, str(form["public_form_key"]), {"message": "Hello"})

    done = cli.json("form", "delete", form_id, "--yes")

    assert done == {
        "form_id": form_id,
        "deleted": True,
        "erased_submissions": 1,
        "waiting_for_deliveries": True,  # its submission.deleted is not fanned out yet
    }
    assert cli("form", "show", form_id).code == 1
    assert cli("submissions", "delete", submission_id).code == 1, "erased already"
    assert form_id not in cli("form", "list").out
    gone = http.post(f"/f/{form['public_form_key']}", json={"message": "late"})
    assert gone.status_code == 404
    assert cli("form", "delete", form_id, "--yes").code == 1, "deleted once only"


def test_delete_without_a_terminal_or_yes_is_refused_and_deletes_nothing(
    cli: Cli, form: dict[str, object], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("Contact\n"))

    refused = cli("form", "delete", str(form["form_id"]))

    assert refused.code == 1
    assert "--yes" in refused.err
    assert cli("form", "show", str(form["form_id"])).code == 0


def test_delete_at_a_terminal_asks_for_the_forms_name(
    cli: Cli, form: dict[str, object], monkeypatch: pytest.MonkeyPatch
) -> None:
    form_id = str(form["form_id"])
    monkeypatch.setattr("sys.stdin", Terminal("Contacts\n"))

    wrong = cli("form", "delete", form_id)

    assert wrong.code == 1
    assert "Type the form's name" in wrong.err
    assert "nothing was deleted" in wrong.err
    assert cli("form", "show", form_id).code == 0

    monkeypatch.setattr("sys.stdin", Terminal("Contact\n"))
    right = cli("form", "delete", form_id)

    assert right.code == 0, right.err
    assert f"form {form_id} deleted; 0 submissions erased" in right.out
    assert cli("form", "show", form_id).code == 1


def test_purge_finishes_a_deleted_forms_removal(
    cli: Cli, form: dict[str, object], http: TestClient
) -> None:
    submit(http, str(form["public_form_key"]), {"message": "Hello"})
    cli.json("form", "delete", str(form["form_id"]), "--yes")
    cli.json("relay", "--once")

    purged = cli.json("purge")

    assert purged["deleted_forms"] == {"submissions": 0, "removed": 1, "waiting": 0}
    assert "deleted_forms" not in cli.json("purge"), "nothing left to finish"
