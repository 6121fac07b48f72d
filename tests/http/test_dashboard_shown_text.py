"""What a visitor typed cannot pass for something else in the dashboard: each name and
value sits in a direction isolate of its own, so a right-to-left override in one cannot
reorder what follows it, in the inbox and on the submission's page; invisible and
control characters are shown as markers naming them, escaped like everything else. How
Chromium then lays it out is held by tests/browser/test_dashboard_bidi.py."""

from __future__ import annotations

import re
from collections.abc import Mapping

import pytest
from markupsafe import Markup

from intake.domain.model import Scope
from intake.entrypoints.http.dashboard import inbox as inbox_page
from intake.entrypoints.http.dashboard.shown_text import isolated, revealed
from tests.http.conftest import ServiceFactory
from tests.http.dashboard_support import Dashboard

RLO = "\u202e"
SPOOF = {"name": f"Invoice {RLO}gnp.exe", "note": "after"}
ROW_LINK = re.compile(r'<td[^>]*><a href="/dashboard/submissions/[^"]+">(.*?)</a></td>', re.DOTALL)


def marker(code: str, name: str) -> str:
    return f'<span class="invisible-char" dir="ltr" title="U+{code} {name}">⟨U+{code}⟩</span>'


@pytest.fixture
def dash(make_service: ServiceFactory) -> Dashboard:
    dash = Dashboard(make_service())
    dash.owner_signs_in()
    return dash


def _submit(dash: Dashboard, data: Mapping[str, object]) -> str:
    created = dash.svc.run(
        dash.svc.services.keys.create,
        dash.workspace.workspace_id,
        scopes=frozenset({Scope.SUBMIT}),
    )
    answer = dash.svc.server(dash.form.form_id, created.secret, json=data)
    assert answer.status_code == 201, answer.text
    submission_id: str = answer.json()["submission_id"]
    return submission_id


def _row(dash: Dashboard) -> str:
    page = dash.client.get(f"/dashboard/forms/{dash.form.form_id}")
    assert page.status_code == 200
    [row] = ROW_LINK.findall(page.text)
    return str(row)


def test_a_bidi_override_is_isolated_and_shown_as_a_marker_in_the_inbox(dash: Dashboard) -> None:
    _submit(dash, SPOOF)

    row = _row(dash)

    override = marker("202E", "RIGHT-TO-LEFT OVERRIDE")
    assert row == (
        f'<bdi dir="auto">name</bdi>: <bdi dir="auto">Invoice {override}gnp.exe</bdi>'
        ' · <bdi dir="auto">note</bdi>: <bdi dir="auto">after</bdi>'
    )
    assert RLO not in dash.client.get(f"/dashboard/forms/{dash.form.form_id}").text


def test_the_submission_page_isolates_names_and_values_and_shows_every_hidden_character(
    dash: Dashboard,
) -> None:
    submission_id = _submit(
        dash,
        {
            **SPOOF,
            "zero\u200bwidth": "a\u200db\ufeffc\u2066d\u2069",
            "_subject": f"Quote {RLO}fdp.exe",
            "bell": "ding\u0007 \u0085next",
            "lines": "one\r\ntwo\tthree",
            "list": ["x\u200f", "<b>y</b>"],
        },
    )

    text = dash.client.get(f"/dashboard/submissions/{submission_id}").text

    override = marker("202E", "RIGHT-TO-LEFT OVERRIDE")
    assert '<dt><bdi dir="auto">name</bdi></dt>' in text
    assert f'<span class="value"><bdi dir="auto">Invoice {override}gnp.exe</bdi></span>' in text
    assert '<span class="value"><bdi dir="auto">after</bdi></span>' in text
    assert f'<bdi dir="auto">zero{marker("200B", "ZERO WIDTH SPACE")}width</bdi>' in text
    assert (
        f"a{marker('200D', 'ZERO WIDTH JOINER')}b{marker('FEFF', 'ZERO WIDTH NO-BREAK SPACE')}"
        f"c{marker('2066', 'LEFT-TO-RIGHT ISOLATE')}d{marker('2069', 'POP DIRECTIONAL ISOLATE')}"
    ) in text
    assert f'<bdi dir="auto">Quote {override}fdp.exe</bdi>' in text  # the subject
    assert (
        f"ding{marker('0007', 'CONTROL CHARACTER')} {marker('0085', 'CONTROL CHARACTER')}next"
    ) in text
    assert '<bdi dir="auto">one\r\ntwo\tthree</bdi>' in text  # line breaks and tabs stay
    assert f'<bdi dir="auto">x{marker("200F", "RIGHT-TO-LEFT MARK")}</bdi>' in text
    assert '<bdi dir="auto">&lt;b&gt;y&lt;/b&gt;</bdi>' in text  # escaped as ever
    for hidden in (RLO, "\u200b", "\u200d", "\ufeff", "\u2066", "\u2069", "\u200f", "\x07"):
        assert hidden not in text


def test_right_to_left_text_is_kept_as_it_is(dash: Dashboard) -> None:
    submission_id = _submit(dash, {"الاسم": "مرحبا بالعالم", "שם": "שלום"})

    text = dash.client.get(f"/dashboard/submissions/{submission_id}").text
    row = _row(dash)

    assert '<dt><bdi dir="auto">الاسم</bdi></dt>' in text
    assert '<span class="value"><bdi dir="auto">مرحبا بالعالم</bdi></span>' in text
    assert "invisible-char" not in text
    assert row == (
        '<bdi dir="auto">الاسم</bdi>: <bdi dir="auto">مرحبا بالعالم</bdi>'
        ' · <bdi dir="auto">שם</bdi>: <bdi dir="auto">שלום</bdi>'
    )


@pytest.mark.parametrize(
    ("data", "end"),
    [
        ({"message": "word " * 60, "later": "never shown"}, "word …"),
        ({"a": "b" * 50, "n" * 100: "v", "later": "never shown"}, "b · nnnn"),  # no value
        ({"a": "b" * 116, "later": "never shown"}, "bbbb…"),  # no room for the next
    ],
    ids=["value", "name", "separator"],
)
def test_a_long_row_is_cut_to_the_preview_length_with_an_ellipsis(
    dash: Dashboard, data: dict[str, str], end: str
) -> None:
    _submit(dash, data)

    row = _row(dash)

    shown = re.sub(r"<[^>]+>", "", row)
    assert len(shown) == inbox_page.PREVIEW
    assert shown.startswith(next(iter(data)) + ": ")
    assert shown.endswith("…")
    assert end in shown
    assert "later" not in row


def test_the_filters_escape_first_and_add_only_their_own_markup() -> None:
    hostile = f'<script>alert("{RLO}")</script>'

    assert isolated(hostile) == (
        f'<bdi dir="auto">&lt;script&gt;alert(&#34;{RLO}&#34;)&lt;/script&gt;</bdi>'
    )
    assert revealed(hostile) == (
        '<bdi dir="auto">&lt;script&gt;alert(&#34;'
        + marker("202E", "RIGHT-TO-LEFT OVERRIDE")
        + "&#34;)&lt;/script&gt;</bdi>"
    )
    # Markup handed in is escaped all the same: nothing passes through unescaped.
    assert revealed(Markup("<b>x</b>")) == '<bdi dir="auto">&lt;b&gt;x&lt;/b&gt;</bdi>'
