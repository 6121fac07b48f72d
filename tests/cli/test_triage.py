"""`intake submissions release|mark-spam|delete ID`: the same triage as the management API,
on the embedded database."""

from __future__ import annotations

import pytest

from tests.cli.conftest import Cli
from tests.cli.test_submissions import Made, made  # noqa: F401 - the fixture


def outbox_types(cli: Cli, submission_id: str) -> list[str]:
    events = cli.json("outbox", "list")["events"]
    return sorted(e["event_type"] for e in events if e["submission_id"] == submission_id)


def test_release_accepts_a_spam_submission_once(cli: Cli, made: Made) -> None:  # noqa: F811
    released = cli.json("submissions", "release", made.spam)
    again = cli("submissions", "release", made.spam)

    assert released["submission_id"] == made.spam
    assert released["status"] == "accepted"
    assert again.code == 0
    assert "was accepted already" in again.out
    assert outbox_types(cli, made.spam) == ["submission.created", "submission.flagged"]
    listed = cli.json("submissions", "list", "--form", made.form_id, "--status", "accepted")
    assert {s["submission_id"] for s in listed["submissions"]} == {made.accepted, made.spam}


def test_release_of_an_unverified_one_queues_its_created_event(cli: Cli, made: Made) -> None:  # noqa: F811
    assert cli.json("submissions", "release", made.unverified)["status"] == "accepted"
    assert outbox_types(cli, made.unverified) == ["submission.created", "submission.flagged"]


def test_mark_spam_queues_nothing(cli: Cli, made: Made) -> None:  # noqa: F811
    marked = cli.json("submissions", "mark-spam", made.accepted)

    assert marked["status"] == "spam"
    assert outbox_types(cli, made.accepted) == ["submission.created"]


def test_an_accepted_one_marked_spam_then_released_is_not_sent_again(cli: Cli, made: Made) -> None:  # noqa: F811
    cli.json("submissions", "mark-spam", made.accepted)

    released = cli.json("submissions", "release", made.accepted)
    cli.json("submissions", "mark-spam", made.accepted)
    again = cli("submissions", "release", made.accepted)

    assert released["status"] == "accepted"
    assert again.code == 0
    assert "sent before: nothing is queued" in again.out
    assert outbox_types(cli, made.accepted) == ["submission.created"]


def test_delete_erases_and_then_the_id_is_unknown(cli: Cli, made: Made) -> None:  # noqa: F811
    deleted = cli.json("submissions", "delete", made.accepted)

    assert deleted == {"submission_id": made.accepted, "deleted": True}
    assert outbox_types(cli, made.accepted) == ["submission.created", "submission.deleted"]
    listed = cli.json("submissions", "list", "--form", made.form_id)["submissions"]
    assert made.accepted not in {s["submission_id"] for s in listed}
    for command in ("release", "mark-spam", "delete"):
        refused = cli("submissions", command, made.accepted, "--json")
        assert refused.code == 1
        assert refused.document == {"ok": False, "error": f"no submission {made.accepted!r}"}


@pytest.mark.parametrize("command", ["release", "mark-spam", "delete"])
def test_an_unknown_id_is_refused(cli: Cli, command: str) -> None:
    result = cli("submissions", command, "sub_nothing")

    assert result.code == 1
    assert "no submission 'sub_nothing'" in result.err


def test_the_commands_triage_teaches_the_spam_filter(cli: Cli, made: Made) -> None:  # noqa: F811
    workspace_id = cli.json("form", "show", made.form_id)["workspace_id"]

    def taught() -> tuple[int, int]:
        stats = cli.json("spam", "stats", "--workspace", workspace_id)
        return stats["spam_messages"], stats["ham_messages"]

    cli.json("submissions", "mark-spam", made.accepted)
    cli.json("submissions", "release", made.unverified)
    cli.json("submissions", "mark-spam", made.spam)  # spam already: confirmed
    cli.json("submissions", "mark-spam", made.spam)  # once
    assert taught() == (2, 1)

    cli.json("submissions", "release", made.spam)  # reversed: unlearned, then ham
    assert taught() == (1, 2)

    cli.json("submissions", "delete", made.accepted)
    assert taught() == (0, 2)
