from __future__ import annotations

import asyncio

import pytest
from starlette.testclient import TestClient

from intake.adapters.sqlite import open_sqlite_store
from intake.domain.model import SubmissionStatus
from tests.cli.conftest import Cli, submit
from tests.contract.builders import WORKSPACE_ID, plan, seed, submission


def test_workspace_create_prints_the_workspace_id_and_view(cli: Cli) -> None:
    doc = cli.json("workspace", "create", "--name", "Acme")

    assert doc["workspace_id"].startswith("ws_")
    assert doc["name"] == "Acme"
    assert doc["plan"] == "free"
    assert doc["monthly_limit"] is None
    assert doc["active"] is True


def test_workspace_create_takes_a_plan_and_its_own_limit(cli: Cli) -> None:
    doc = cli.json(
        "workspace", "create", "--name", "Big", "--plan", "business", "--monthly-limit", "40"
    )

    shown = cli.json("workspace", "show", doc["workspace_id"])
    assert shown["plan"] == "business"
    assert shown["monthly_limit"] == 40
    # Business has overage: the ceiling is twice the workspace's own limit.
    assert shown["usage"]["ceiling"] == 80
    assert shown["usage"]["used"] == 0


def test_workspace_show_gives_this_months_usage(cli: Cli) -> None:
    workspace_id = cli.json("workspace", "create", "--name", "Acme")["workspace_id"]

    usage = cli.json("workspace", "show", workspace_id)["usage"]

    assert set(usage) == {"period", "used", "ceiling", "limit", "forms"}
    assert usage["ceiling"] == 50  # free: the plan limit, no overage
    assert usage["limit"] == 50
    assert usage["forms"] == []
    assert len(usage["period"]) == len("2025-01")


def test_workspace_create_without_json_prints_readable_lines(cli: Cli) -> None:
    result = cli("workspace", "create", "--name", "Acme")

    assert result.code == 0
    first, *rest = result.out.splitlines()
    assert first.startswith("workspace ws_")
    assert first.endswith(" created")
    assert "name=Acme" in rest
    assert "plan=free" in rest


def test_suspend_and_activate_toggle_the_workspace(cli: Cli) -> None:
    workspace_id = cli.json("workspace", "create", "--name", "Acme")["workspace_id"]

    assert cli.json("workspace", "suspend", workspace_id)["active"] is False
    assert cli.json("workspace", "show", workspace_id)["active"] is False
    assert cli.json("workspace", "activate", workspace_id)["active"] is True
    assert cli.json("workspace", "show", workspace_id)["active"] is True


def test_suspend_prints_the_new_state(cli: Cli) -> None:
    workspace_id = cli.json("workspace", "create", "--name", "Acme")["workspace_id"]

    assert cli("workspace", "suspend", workspace_id).out == f"workspace {workspace_id} suspended\n"
    assert cli("workspace", "activate", workspace_id).out == f"workspace {workspace_id} active\n"


def test_workspace_list_shows_every_workspace(cli: Cli) -> None:
    assert cli.json("workspace", "list") == {"workspaces": []}
    first = cli.json("workspace", "create", "--name", "One")["workspace_id"]
    second = cli.json("workspace", "create", "--name", "Two")["workspace_id"]

    listed = cli.json("workspace", "list")["workspaces"]

    assert {w["workspace_id"] for w in listed} == {first, second}
    table = cli("workspace", "list").out
    assert first in table
    assert second in table


def test_workspace_update_changes_the_plan_and_limit(cli: Cli) -> None:
    workspace_id = cli.json("workspace", "create", "--name", "Acme")["workspace_id"]

    updated = cli.json(
        "workspace", "update", workspace_id, "--plan", "starter", "--monthly-limit", "5"
    )
    assert (updated["plan"], updated["monthly_limit"]) == ("starter", 5)

    cleared = cli.json("workspace", "update", workspace_id, "--no-monthly-limit")
    assert (cleared["plan"], cleared["monthly_limit"]) == ("starter", None)


def test_an_unknown_workspace_is_refused_with_exit_1(cli: Cli) -> None:
    for command in ("show", "suspend", "activate"):
        result = cli("workspace", command, "ws_nope", "--json")

        assert result.code == 1
        assert result.document == {"ok": False, "error": "no workspace 'ws_nope'"}
        assert "no workspace 'ws_nope'" in result.err


def test_a_negative_monthly_limit_is_refused(cli: Cli) -> None:
    result = cli("workspace", "create", "--name", "Acme", "--monthly-limit", "-1")

    assert result.code == 1
    assert "negative" in result.err


def test_workspace_create_without_a_name_is_a_usage_error(cli: Cli) -> None:
    result = cli("workspace", "create")

    assert result.code == 2
    assert "--name" in result.err
    assert result.out == ""


def test_an_unknown_plan_is_a_usage_error(cli: Cli) -> None:
    assert cli("workspace", "create", "--name", "Acme", "--plan", "gold").code == 2


def test_workspace_show_gives_the_bytes_of_files_kept_and_the_ceiling(
    cli: Cli, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    kept = [submission(1, files=2), submission(2, files=1, status=SubmissionStatus.SPAM)]

    async def fill() -> None:
        store = await open_sqlite_store(database_url)
        try:
            await seed(store)
            for sub in kept:
                await store.submissions.commit(plan(sub))
        finally:
            await store.close()

    asyncio.run(fill())
    monkeypatch.setenv("INTAKE_WORKSPACE_STORAGE_LIMIT", "50000000")

    shown = cli.json("workspace", "show", WORKSPACE_ID)

    used = sum(f.size for sub in kept for f in sub.files)
    assert shown["storage"] == {"used": used, "ceiling": 50_000_000}
    lines = cli("workspace", "show", WORKSPACE_ID).out.splitlines()
    assert f"storage={used}/50000000 bytes" in lines


def test_a_workspace_takes_its_own_storage_limit_and_gives_it_up(cli: Cli) -> None:
    made = cli.json("workspace", "create", "--name", "Big", "--storage-limit", "10MiB")
    workspace_id = made["workspace_id"]

    assert made["storage_limit"] == 10 * 1024 * 1024
    shown = cli.json("workspace", "show", workspace_id)
    assert shown["storage"] == {"used": 0, "ceiling": 10 * 1024 * 1024}

    changed = cli.json("workspace", "update", workspace_id, "--storage-limit", "2GiB")
    assert changed["storage_limit"] == 2 * 1024**3

    cleared = cli.json("workspace", "update", workspace_id, "--no-storage-limit")
    assert cleared["storage_limit"] is None
    shown = cli.json("workspace", "show", workspace_id)
    assert shown["storage"]["ceiling"] == 1024**3  # INTAKE_WORKSPACE_STORAGE_LIMIT's default


def test_a_bad_storage_limit_is_a_usage_error(cli: Cli) -> None:
    result = cli("workspace", "create", "--name", "Big", "--storage-limit", "lots", "--json")

    assert result.code == 2
    assert "--storage-limit" in result.err


def test_workspace_show_gives_each_forms_share_of_the_month(cli: Cli, http: TestClient) -> None:
    workspace_id = cli.json("workspace", "create", "--name", "Acme")["workspace_id"]
    busy = cli.json("form", "create", "--workspace", workspace_id, "--name", "Busy")
    quiet = cli.json("form", "create", "--workspace", workspace_id, "--name", "Quiet")
    for n in range(3):
        submit(http, busy["public_form_key"], {"message": f"hello {n}"})
    answer = http.post(f"/f/{busy['public_form_key']}", json={"message": "x", "_gotcha": "bot"})
    assert answer.status_code == 201  # a honeypot looks like a success

    usage = cli.json("workspace", "show", workspace_id)["usage"]

    assert usage["used"] == 3
    assert usage["forms"] == sorted(
        [
            {"form_id": busy["form_id"], "used": 3, "honeypot_hits": 1},
            {"form_id": quiet["form_id"], "used": 0, "honeypot_hits": 0},
        ],
        key=lambda form: str(form["form_id"]),
    )
    lines = cli("workspace", "show", workspace_id).out.splitlines()
    assert f"form {busy['form_id']}: used=3 honeypot_hits=1" in lines
