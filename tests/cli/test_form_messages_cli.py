"""`intake form create/update` set what a form mails and keeps, and `intake form
preview-mail` shows what its templates make; a template that does not compile or reaches
outside the sandbox exits 1 naming it, and nothing is saved."""

from __future__ import annotations

from pathlib import Path

from tests.cli.conftest import Cli


def _workspace(cli: Cli) -> str:
    workspace_id: str = cli.json("workspace", "create", "--name", "Acme")["workspace_id"]
    return workspace_id


def test_create_and_update_set_the_switches_and_templates(cli: Cli, tmp_path: Path) -> None:
    subject = tmp_path / "subject.txt"
    subject.write_text("Thanks, {{ fields.name }}", encoding="utf-8")
    form = cli.json(
        "form", "create", "--workspace", _workspace(cli), "--name", "Contact",
        "--autoresponse", "on", "--autoresponse-limit", "20",
        "--template", f"autoresponse_subject={subject}",
    )  # fmt: skip
    assert form["autoresponse"] is True
    assert form["autoresponse_hourly_limit"] == 20
    assert form["templates"]["autoresponse_subject"] == "Thanks, {{ fields.name }}"
    assert form["mail_notifications"] is True

    updated = cli.json(
        "form", "update", form["form_id"], "--mail-notifications", "off", "--forward-only", "on",
        "--default-autoresponse-limit", "--default-template", "autoresponse_subject",
    )  # fmt: skip

    assert (updated["mail_notifications"], updated["forward_only"]) == (False, True)
    assert updated["autoresponse_hourly_limit"] is None
    assert updated["templates"]["autoresponse_subject"] is None
    shown = cli("form", "show", form["form_id"]).out.splitlines()
    assert "templates=-" in shown
    assert "forward_only=true" in shown


def test_a_template_reaching_outside_the_sandbox_exits_1_and_saves_nothing(
    cli: Cli, tmp_path: Path
) -> None:
    form = cli.json("form", "create", "--workspace", _workspace(cli))
    bad = tmp_path / "bad.txt"
    bad.write_text("{{ ''.__class__ }}", encoding="utf-8")

    result = cli("form", "update", form["form_id"], "--template", f"notification_html={bad}")

    assert result.code == 1
    assert "notification_html" in result.err
    assert "__class__" in result.err
    assert cli.json("form", "show", form["form_id"])["templates"]["notification_html"] is None


def test_preview_mail_shows_the_sample_mail(cli: Cli, tmp_path: Path) -> None:
    form = cli.json("form", "create", "--workspace", _workspace(cli), "--name", "Contact")
    html = tmp_path / "html.txt"
    html.write_text("<p>{{ fields.message }}</p>", encoding="utf-8")

    saved = cli.json("form", "preview-mail", form["form_id"], "--kind", "autoresponse")
    tried = cli.json(
        "form", "preview-mail", form["form_id"], "--template", f"notification_html={html}"
    )

    assert saved["subject"] == "We received your message"
    assert "Contact" in saved["text"]
    assert tried["html"] == "<p>Hello &lt;b&gt;there&lt;/b&gt;</p>\n"
    refused = cli("form", "preview-mail", form["form_id"], "--template", "nope=x")
    assert refused.code == 1


def test_a_runaway_template_exits_1_naming_the_limit_and_saves_nothing(
    cli: Cli, tmp_path: Path
) -> None:
    form = cli.json("form", "create", "--workspace", _workspace(cli))
    runaway = tmp_path / "runaway.txt"
    runaway.write_text("{% macro m(n) %}{{ m(n + 1) }}{% endmacro %}{{ m(1) }}", encoding="utf-8")

    given = f"notification_text={runaway}"
    saved = cli("form", "update", form["form_id"], "--template", given)
    shown = cli("form", "preview-mail", form["form_id"], "--template", given)

    for result in (saved, shown):
        assert result.code == 1
        assert "notification_text" in result.err
        assert "nest at most" in result.err
    assert cli.json("form", "show", form["form_id"])["templates"]["notification_text"] is None
