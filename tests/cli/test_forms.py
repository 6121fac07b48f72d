from __future__ import annotations

import pytest
from starlette.testclient import TestClient

from tests.cli.conftest import Cli, submit


@pytest.fixture
def workspace_id(cli: Cli) -> str:
    workspace_id = cli.json("workspace", "create", "--name", "Acme")["workspace_id"]
    assert isinstance(workspace_id, str)
    return workspace_id


def _form(cli: Cli, workspace_id: str, *options: str) -> dict[str, object]:
    return cli.json("form", "create", "--workspace", workspace_id, *options)


def test_form_create_prints_the_form_id_and_public_key(cli: Cli, workspace_id: str) -> None:
    doc = _form(cli, workspace_id)

    assert str(doc["form_id"]).startswith("frm_")
    assert doc["public_form_key"]
    assert doc["workspace_id"] == workspace_id
    assert doc["mode"] == "public"
    assert doc["state"] == "enabled"
    assert doc["allowed_origins"] == []
    assert doc["challenge"] is None


def test_form_create_takes_every_setting(cli: Cli, workspace_id: str) -> None:
    result = cli(
        "form", "create", "--workspace", workspace_id, "--name", "Contact",
        "--mode", "protected",
        "--allowed-origin", "https://example.com", "--allowed-origin", "https://www.example.com",
        "--challenge", "turnstile", "--challenge-secret", "s3cret-value",
        "--redirect-url", "https://example.com/thanks",
        "--rule", "email:email", "--rule", "message:max_length=500", "--rule", "name:required",
        "--spam-threshold", "3.5",
        "--json",
    )  # fmt: skip

    assert result.code == 0, result.err
    doc = result.document
    assert doc["name"] == "Contact"
    assert doc["mode"] == "protected"
    assert doc["allowed_origins"] == ["https://example.com", "https://www.example.com"]
    assert doc["challenge"] == "turnstile"
    assert doc["redirect_url"] == "https://example.com/thanks"
    assert doc["rules"] == [
        {"field": "email", "kind": "email"},
        {"field": "message", "kind": "max_length", "limit": 500},
        {"field": "name", "kind": "required"},
    ]
    assert doc["spam_threshold"] == 3.5
    # The provider's secret is stored, never printed back.
    assert "s3cret-value" not in result.out
    assert "s3cret-value" not in cli("form", "show", str(doc["form_id"])).out


def test_form_create_without_json_prints_settings_as_lines(cli: Cli, workspace_id: str) -> None:
    result = cli(
        "form", "create", "--workspace", workspace_id, "--rule", "email:email",
        "--rule", "message:max_length=9",
    )  # fmt: skip

    lines = result.out.splitlines()
    assert lines[0].startswith("form frm_")
    assert lines[0].endswith(" created")
    assert "rules=email:email,message:max_length=9" in lines
    assert "mode=public" in lines
    assert any(line.startswith("public_form_key=") for line in lines)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--rule", "email"], "FIELD:KIND"),
        (["--rule", "email:bogus"], "unknown rule"),
        (["--rule", "note:max_length=lots"], "max_length"),
        (["--challenge", "turnstile"], "--challenge needs --challenge-secret"),
        (["--challenge-secret", "s"], "--challenge-secret goes with --challenge"),
        (["--allowed-origin", "not a url"], "not an origin"),
        (["--redirect-url", "/relative"], "absolute"),
        (["--spam-threshold", "0"], "more than zero"),
        (["--spam-threshold", "nan"], "must be a finite number more than zero, not nan"),
        (["--spam-threshold", "inf"], "must be a finite number more than zero, not inf"),
        (["--spam-threshold=-inf"], "must be a finite number more than zero, not -inf"),
        (["--name", ""], "a form's name cannot be empty"),
        (["--name", " \t "], "a form's name cannot be empty"),
        (["--name", "x" * 201], "a form's name is at most 200 characters, not 201"),
        (["--rule", "_replyto:email"], "no rule can be set on '_replyto'"),
        (["--rule", "_subject:required"], "no rule can be set on '_subject'"),
        (["--rule", "_anything:max_length=3"], "control fields"),
    ],
)
def test_form_create_refuses_bad_settings_with_exit_1(
    cli: Cli, workspace_id: str, options: list[str], message: str
) -> None:
    result = cli("form", "create", "--workspace", workspace_id, *options, "--json")

    assert result.code == 1
    assert result.document["ok"] is False
    assert message in result.document["error"]
    assert message in result.err
    assert cli.json("form", "list")["forms"] == []


def test_form_create_in_an_unknown_workspace_is_refused(cli: Cli) -> None:
    result = cli("form", "create", "--workspace", "ws_nope")

    assert result.code == 1
    assert "no workspace 'ws_nope'" in result.err


@pytest.mark.parametrize(
    "options",
    [
        [],  # --workspace is required
        ["--workspace", "w", "--mode", "secret"],
        ["--workspace", "w", "--challenge", "captchaco", "--challenge-secret", "s"],
        ["--workspace", "w", "--spam-threshold", "high"],
    ],
)
def test_form_create_usage_errors_exit_2(cli: Cli, options: list[str]) -> None:
    result = cli("form", "create", *options, "--json")

    assert result.code == 2
    assert result.document["ok"] is False


def test_form_update_changes_only_what_is_given(cli: Cli, workspace_id: str) -> None:
    form_id = str(_form(cli, workspace_id, "--name", "Old", "--rule", "email:email")["form_id"])

    doc = cli.json(
        "form", "update", form_id, "--name", "New", "--mode", "protected",
        "--allowed-origin", "https://example.com", "--challenge", "hcaptcha",
        "--challenge-secret", "s", "--redirect-url", "https://example.com/done",
        "--spam-threshold", "2",
    )  # fmt: skip

    assert doc["name"] == "New"
    assert doc["mode"] == "protected"
    assert doc["allowed_origins"] == ["https://example.com"]
    assert doc["challenge"] == "hcaptcha"
    assert doc["redirect_url"] == "https://example.com/done"
    assert doc["spam_threshold"] == 2.0
    assert doc["rules"] == [{"field": "email", "kind": "email"}]  # untouched

    doc = cli.json("form", "update", form_id, "--rule", "name:required")
    assert doc["rules"] == [{"field": "name", "kind": "required"}]
    assert doc["name"] == "New"


def test_form_update_clears_lists_and_settings(cli: Cli, workspace_id: str) -> None:
    form_id = str(
        _form(
            cli, workspace_id, "--allowed-origin", "https://example.com", "--rule", "a:required",
            "--challenge", "recaptcha", "--challenge-secret", "s",
            "--redirect-url", "https://example.com/t",
        )["form_id"]
    )  # fmt: skip

    doc = cli.json(
        "form", "update", form_id, "--clear-allowed-origins", "--clear-rules", "--no-challenge",
        "--clear-redirect-url",
    )  # fmt: skip

    assert doc["allowed_origins"] == []
    assert doc["rules"] == []
    assert doc["challenge"] is None
    assert doc["redirect_url"] is None
    assert cli.json("form", "show", form_id) == doc


@pytest.mark.parametrize(
    "options",
    [
        ["--allowed-origin", "https://example.com", "--clear-allowed-origins"],
        ["--rule", "a:required", "--clear-rules"],
        ["--challenge", "turnstile", "--challenge-secret", "s", "--no-challenge"],
        ["--redirect-url", "https://example.com/t", "--clear-redirect-url"],
    ],
)
def test_form_update_refuses_setting_and_clearing_at_once(
    cli: Cli, workspace_id: str, options: list[str]
) -> None:
    form_id = str(_form(cli, workspace_id)["form_id"])

    assert cli("form", "update", form_id, *options).code == 2


def test_a_form_created_without_a_name_is_named_untitled(cli: Cli, workspace_id: str) -> None:
    assert _form(cli, workspace_id)["name"] == "Untitled form"
    assert _form(cli, workspace_id, "--name", "  Contact ")["name"] == "Contact"
    assert _form(cli, workspace_id, "--name", "x" * 200)["name"] == "x" * 200


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--name", ""], "a form's name cannot be empty"),
        (["--name", "   "], "a form's name cannot be empty"),
        (["--name", "x" * 201], "at most 200 characters"),
        (["--rule", "_replyto:email"], "no rule can be set on '_replyto'"),
        (["--rule", "email:email", "--rule", "_next:url"], "no rule can be set on '_next'"),
        (["--spam-threshold", "nan"], "must be a finite number more than zero, not nan"),
        (["--spam-threshold", "infinity"], "must be a finite number more than zero, not inf"),
    ],
)
def test_form_update_refuses_a_blank_name_control_field_rules_and_odd_thresholds(
    cli: Cli, workspace_id: str, options: list[str], message: str
) -> None:
    form = _form(cli, workspace_id, "--name", "Contact", "--rule", "email:email")

    result = cli("form", "update", str(form["form_id"]), *options, "--json")

    assert result.code == 1, result.err
    assert message in result.document["error"]
    assert cli.json("form", "show", str(form["form_id"])) == form  # nothing changed


def test_form_update_help_says_lists_are_replaced_whole(cli: Cli) -> None:
    result = cli("form", "update", "--help")

    text = " ".join(result.out.split())
    assert result.code == 0
    assert "replaces the form's whole list of allowed origins" in text
    assert "replaces the form's whole list of rules" in text


def test_form_update_refuses_bad_values(cli: Cli, workspace_id: str) -> None:
    form_id = str(_form(cli, workspace_id)["form_id"])

    assert cli("form", "update", form_id, "--rule", "nonsense").code == 1
    assert cli("form", "update", form_id, "--challenge", "turnstile").code == 1
    assert cli("form", "update", form_id, "--no-challenge", "--challenge-secret", "s").code == 1
    assert cli("form", "update", "frm_nope", "--name", "x").code == 1


def test_pause_and_resume_switch_the_public_endpoint(
    cli: Cli, workspace_id: str, http: TestClient
) -> None:
    form = _form(cli, workspace_id)
    form_id, key = str(form["form_id"]), str(form["public_form_key"])

    paused = cli.json("form", "pause", form_id)
    assert (paused["enabled"], paused["state"]) == (False, "paused")
    refused = http.post(f"/f/{key}", json={"message": "hi"})
    assert refused.status_code == 403
    assert refused.json()["error"]["code"] == "form_disabled"

    resumed = cli.json("form", "resume", form_id)
    assert (resumed["enabled"], resumed["state"]) == (True, "enabled")
    submit(http, key, {"message": "hi"})


def test_rotate_key_gives_a_new_key_and_retires_the_old(
    cli: Cli, workspace_id: str, http: TestClient
) -> None:
    form = _form(cli, workspace_id)
    old_key = str(form["public_form_key"])

    rotated = cli.json("form", "rotate-key", str(form["form_id"]))

    new_key = rotated["public_form_key"]
    assert new_key != old_key
    assert rotated["form_id"] == form["form_id"]
    assert cli.json("form", "show", str(form["form_id"]))["public_form_key"] == new_key
    assert http.post(f"/f/{old_key}", json={"message": "hi"}).status_code == 404
    submit(http, new_key, {"message": "hi"})


def test_form_show_pause_resume_and_rotate_refuse_unknown_forms(cli: Cli) -> None:
    for command in ("show", "pause", "resume", "rotate-key"):
        result = cli("form", command, "frm_nope", "--json")
        assert result.code == 1
        assert result.document == {"ok": False, "error": "no form 'frm_nope'"}


def test_form_list_all_or_by_workspace(cli: Cli, workspace_id: str) -> None:
    other = cli.json("workspace", "create", "--name", "Other")["workspace_id"]
    mine = _form(cli, workspace_id, "--name", "Mine")["form_id"]
    theirs = _form(cli, other, "--name", "Theirs")["form_id"]

    everything = cli.json("form", "list")["forms"]
    assert {f["form_id"] for f in everything} == {mine, theirs}
    only_mine = cli.json("form", "list", "--workspace", workspace_id)["forms"]
    assert [f["form_id"] for f in only_mine] == [mine]
    assert "Mine" in cli("form", "list").out
    assert cli("form", "list", "--workspace", "ws_nope").code == 1
