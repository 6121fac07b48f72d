"""The command line's privacy: a form's `--retention-days`, `intake purge` erasing what is
past it, and `intake erase` answering a person's request, on a SQLite file."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest
from starlette.testclient import TestClient

from intake.adapters.sqlite import open_sqlite_store
from tests.cli.conftest import Cli, submit
from tests.contract.builders import FORM_ID, plan, seed, submission

ADA = "ada@example.com"


def _form(cli: Cli, *options: str) -> dict[str, object]:
    workspace = cli.json("workspace", "create", "--name", "Acme")
    return cli.json("form", "create", "--workspace", str(workspace["workspace_id"]), *options)


def test_a_forms_retention_is_set_changed_and_dropped(cli: Cli) -> None:
    form = _form(cli, "--retention-days", "30")
    assert form["retention_days"] == 30
    form_id = str(form["form_id"])

    assert cli.json("form", "update", form_id, "--name", "Renamed")["retention_days"] == 30
    assert cli.json("form", "update", form_id, "--retention-days", "7")["retention_days"] == 7
    assert cli.json("form", "update", form_id, "--no-retention")["retention_days"] is None
    shown = cli("form", "show", form_id)
    assert "retention_days=" in shown.out


@pytest.mark.parametrize("days", ["0", "-3", "3651"])
def test_a_retention_out_of_range_is_refused(cli: Cli, days: str) -> None:
    form_id = str(_form(cli)["form_id"])

    result = cli("form", "update", form_id, "--retention-days", days)

    assert result.code == 1
    assert "retention" in result.err
    assert cli.json("form", "show", form_id)["retention_days"] is None


def test_retention_days_and_no_retention_do_not_go_together(cli: Cli) -> None:
    form_id = str(_form(cli)["form_id"])

    assert cli("form", "update", form_id, "--retention-days", "3", "--no-retention").code == 2


async def _old_and_new(url: str, now: datetime) -> tuple[str, str]:
    """Two submissions of frm_1, their events published: 30.5 days old and 29.5 days
    old, half a day each side of a 30-day retention, so that erasing a day early or a
    day late is caught."""
    store = await open_sqlite_store(url)
    try:
        await seed(store)
        old = submission(1, created_at=now - timedelta(days=30, hours=12))
        new = submission(2, created_at=now - timedelta(days=29, hours=12))
        for each in (old, new):
            await store.submissions.commit(plan(each))
        while await store.deliveries.fan_out(now, 100):
            pass
    finally:
        await store.close()
    return old.submission_id, new.submission_id


def test_purge_erases_what_is_past_the_forms_retention(cli: Cli, database_url: str) -> None:
    old, new = asyncio.run(_old_and_new(database_url, datetime.now(UTC)))
    before = cli.json("purge")
    assert (before["expired_submissions"], before["expired_files"]) == (0, 0)
    cli.json("form", "update", FORM_ID, "--retention-days", "30")

    after = cli.json("purge")

    assert (after["expired_submissions"], after["expired_files"]) == (1, 0)
    listed = cli.json("submissions", "list", "--form", FORM_ID)["submissions"]
    assert [s["submission_id"] for s in listed] == [new]
    assert old not in cli("submissions", "list", "--form", FORM_ID).out
    said = cli("purge").out.splitlines()
    assert "erased 0 submissions past their form's retention, and 0 files" in said


# -- intake erase -------------------------------------------------------------------------


@pytest.fixture
def people(cli: Cli, http: TestClient) -> dict[str, str]:
    workspace = cli.json("workspace", "create", "--name", "Acme")
    workspace_id = str(workspace["workspace_id"])
    form = cli.json("form", "create", "--workspace", workspace_id, "--name", "Contact")
    key = str(form["public_form_key"])
    return {
        "workspace": workspace_id,
        "form": str(form["form_id"]),
        "ada": submit(http, key, {"email": ADA, "message": "hello"}),
        "ada_again": submit(http, key, {"from": ["x", "ADA@example.COM"]}),
        "bob": submit(http, key, {"email": "bob@example.com"}),
    }


def test_a_dry_run_lists_what_would_go_and_erases_nothing(cli: Cli, people: dict[str, str]) -> None:
    receipt = cli.json("erase", "--workspace", people["workspace"], "--email", ADA, "--dry-run")

    assert receipt["dry_run"] is True
    assert receipt["count"] == 2
    assert [s["submission_id"] for s in receipt["submissions"]] == [
        people["ada"],
        people["ada_again"],
    ]
    assert len(cli.json("submissions", "list", "--form", people["form"])["submissions"]) == 3
    said = cli("erase", "--workspace", people["workspace"], "--email", ADA, "--dry-run").out
    assert said.startswith("would erase 2 submissions at ")
    assert people["ada"] in said


def test_an_erasure_erases_and_prints_a_receipt_without_the_data(
    cli: Cli, people: dict[str, str]
) -> None:
    result = cli("erase", "--workspace", people["workspace"], "--email", f" {ADA.upper()} ")

    assert result.code == 0, result.err
    assert result.out.startswith("erased 2 submissions at ")
    assert f"form {people['form']}: 2" in result.out
    assert "hello" not in result.out
    assert ADA not in result.out.lower()
    listed = cli.json("submissions", "list", "--form", people["form"])["submissions"]
    assert [s["submission_id"] for s in listed] == [people["bob"]]
    again = cli.json("erase", "--workspace", people["workspace"], "--email", ADA)
    assert receipt_part(again) == {"count": 0, "forms": [], "submissions": []}


def receipt_part(receipt: dict[str, object]) -> dict[str, object]:
    return {k: receipt[k] for k in ("count", "forms", "submissions")}


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (("--workspace", "ws_missing", "--email", ADA), "no workspace"),
        (("--email", "not an address"), "valid email"),
    ],
)
def test_an_erasure_that_cannot_be_is_refused(
    cli: Cli, people: dict[str, str], argv: tuple[str, ...], said: str
) -> None:
    full = argv if "--workspace" in argv else ("--workspace", people["workspace"], *argv)

    result = cli("erase", *full)

    assert result.code == 1
    assert said in result.err
    assert len(cli.json("submissions", "list", "--form", people["form"])["submissions"]) == 3
