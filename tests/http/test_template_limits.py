"""An owner's template cannot take the service's time or memory: every way of making a
big value or spending time (integer size, `~`, the size-making filters and methods,
formatting, loops, recursion) is refused with a 422 naming the template, on preview and
on save (API and dashboard), and nothing is saved. Rendering runs in worker processes
bounded in CPU time and memory, so each of these ends quickly even if the sandbox let
it through: the test fails rather than hangs."""

from __future__ import annotations

from typing import Any

import pytest

from tests.http.conftest import Service, ServiceFactory, assert_error
from tests.http.dashboard_support import Dashboard
from tests.http.test_dashboard_form_messages import Messages
from tests.http.test_management_forms import Owner

# Each builds a value far past the 100,000-character cap, or a number of millions of
# digits, or runs for minutes, or recurses without end, when nothing bounds it.
HOSTILE = {
    "chained_powers": "{% set x = (((9**64)**64)**64)**64 %}{{ x > 1 }}",
    "one_huge_power": "{{ 9 ** 99999999 }}",
    "products": "{% set x = 9 ** 300 %}{{ (x * x * x * x * x) > 1 }}",
    "concatenation": '{% set a = "x" * 100000 %}{{ (a ~ a ~ a ~ a)|length }}',
    "sum_of_texts": '{% set a = "x" * 100000 %}{{ (a + a)|length }}',
    "center": '{{ "x"|center(999999999)|length }}',
    "format_filter": '{{ "%999999999d"|format(1)|length }}',
    "percent": '{{ ("%099999999d" % 1)|length }}',
    "join": '{{ range(1000)|join("x" * 100000)|length }}',
    "join_method": '{{ ("x" * 100000).join(range(1000))|length }}',
    "replace": '{{ ("x" * 1000)|replace("x", "y" * 100000)|length }}',
    "indent": '{{ ("a\n" * 1000)|indent(100000)|length }}',
    "wordwrap": '{{ ("x " * 50000)|wordwrap(1, wrapstring="y" * 1000)|length }}',
    "str_format": '{{ "{:>999999999}".format(1)|length }}',
    "format_map": '{{ "{a:>999999999}".format_map({"a": 1})|length }}',
    "ljust": '{{ "x".ljust(999999999)|length }}',
    "expandtabs": '{{ ("\t" * 100000).expandtabs(100000)|length }}',
    "to_bytes": '{{ (1).to_bytes(999999999, "big")|length }}',
    "bytes": '{{ ("x".encode() * 999999999)|length }}',
    "translate": '{{ ("x" * 100000).translate({120: "y" * 100000})|length }}',
    "batch": '{{ [1]|batch(999999999, "x")|list|length }}',
    "slice": "{{ [1]|slice(999999999)|list|length }}",
    "mapped_filter": '{{ range(1000)|map("center", 100000)|list|length }}',
    "set_block": "{% set x %}{% for i in range(1000) %}{% for j in range(1000) %}y"
    "{% endfor %}{% endfor %}{% endset %}{{ x|length }}",
    "loop_over_text": '{% for a in "x" * 100000 %}{% for b in "x" * 100000 %}'
    "{% endfor %}{% endfor %}",
    "recursive_loop": "{% for x in [1] recursive %}{{ loop([1]) }}{% endfor %}",
    "recursive_macro": "{% macro m(n) %}{{ m(n + 1) }}{% endmacro %}{{ m(1) }}",
    "caller_recursion": "{% macro m() %}{% call m() %}{% endcall %}{% endmacro %}{{ m() }}",
    "deep_nesting": "{{ " + "(" * 3000 + "1" + ")" * 3000 + " }}",
}

FIELD = "templates.notification_text"


@pytest.fixture
def owner(svc: Service) -> Owner:
    return Owner(svc)


@pytest.fixture
def messages(make_service: ServiceFactory) -> Messages:
    return Messages(Dashboard(make_service()))


def _refusal(response: Any) -> str:
    fields: dict[str, str] = assert_error(response, "validation_failed")["error"]["fields"]
    assert list(fields) == [FIELD], fields
    return fields[FIELD]


@pytest.mark.parametrize("source", HOSTILE.values(), ids=HOSTILE.keys())
def test_a_hostile_template_is_refused_on_preview_naming_it(owner: Owner, source: str) -> None:
    form_id = owner.create()["form_id"]

    response = owner.send(
        "POST",
        f"/v1/forms/{form_id}/templates/preview",
        {"templates": {"notification_text": source}},
    )

    assert "notification_text" in _refusal(response)


@pytest.mark.parametrize(
    "name", ["chained_powers", "concatenation", "join", "recursive_macro", "recursive_loop"]
)
def test_a_hostile_template_is_refused_on_save_and_nothing_is_saved(
    owner: Owner, name: str
) -> None:
    form_id = owner.create()["form_id"]
    before = owner.stored(form_id)
    templates = {"notification_text": HOSTILE[name]}

    _refusal(owner.send("PATCH", f"/v1/forms/{form_id}", {"templates": templates}))
    _refusal(owner.send("POST", "/v1/forms", {"name": "Other", "templates": templates}))

    assert owner.stored(form_id) == before


def test_the_refusal_says_which_limit_was_reached(owner: Owner) -> None:
    form_id = owner.create()["form_id"]

    def why(name: str) -> str:
        path = f"/v1/forms/{form_id}/templates/preview"
        return _refusal(owner.send("POST", path, {"templates": {"notification_text": name}}))

    assert "bits" in why(HOSTILE["chained_powers"])
    assert "100000 characters" in why(HOSTILE["concatenation"])
    assert "nest at most" in why(HOSTILE["recursive_macro"])
    # Its operations or its time, whichever ends first on a busy host.
    loop_refusal = why(HOSTILE["loop_over_text"])
    assert "operations" in loop_refusal or "too long" in loop_refusal, loop_refusal


def test_templates_within_the_limits_still_render(owner: Owner) -> None:
    source = (
        "{% macro row(k, v) %}{{ k|upper }}: {{ v|center(12) }}{% endmacro %}"
        "{% for k, v in fields|dictsort %}{{ row(k, v) }}\n{% endfor %}"
        '{{ 2 ** 64 }} {{ "%05.1f"|format(3.14159) }} {{ "{:>6}".format("ok") }} '
        '{{ ["a", "b"]|join(", ") }} {{ "x" ~ "y" }} {{ ("ab" * 3)|replace("b", "c") }}'
    )
    form_id = owner.create(templates={"notification_text": source})["form_id"]

    response = owner.send("POST", f"/v1/forms/{form_id}/templates/preview", {})

    assert response.status_code == 200, response.text
    text = response.json()["text"]
    assert "NAME: Ada Lovelace" in text
    assert "18446744073709551616 003.1     ok a, b xy acacac" in text


def test_the_dashboard_refuses_a_hostile_template_naming_it(messages: Messages) -> None:
    messages.dash.owner_signs_in()
    before = messages.stored()

    refused = messages.save(notification_text=HOSTILE["chained_powers"])
    shown = messages.save("/preview", notification_text=HOSTILE["recursive_macro"])

    assert refused.status_code == 422
    assert 'id="notification_text-error"' in refused.text
    assert "bits" in refused.text
    assert shown.status_code == 422
    assert "nest at most" in shown.text
    assert messages.stored() == before
