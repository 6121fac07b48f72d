"""docs/api.md gives a curl example for each operation of the management API, and its
table of operations names each with the scope the document gives it."""

from __future__ import annotations

import re
from pathlib import Path

from intake.entrypoints.http.openapi import openapi_document

API_DOC = Path(__file__).resolve().parents[2] / "docs" / "api.md"
URL = re.compile(r'"\$INTAKE(/v1/[^"?]*)')
METHOD = re.compile(r"-X (GET|POST|PATCH|PUT|DELETE)\b")
TABLE_ROW = re.compile(r"^\| `(GET|POST|PATCH|DELETE) (/v1/[^`]*)` \| (read|manage) \|", re.M)


def _management_operations() -> dict[tuple[str, str], str]:
    """(method, path with its parameters as `{}`) -> the scope, from /openapi.json."""
    found = {}
    for path, item in openapi_document()["paths"].items():
        for method, operation in item.items():
            if isinstance(operation, dict) and "x-scopes" in operation:
                (scope,) = operation["x-scopes"]
                if scope != "submit":
                    found[(method.upper(), re.sub(r"\{[a-z_]+\}", "{}", path))] = scope
    return found


def _section(title: str) -> str:
    text = API_DOC.read_text()
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def _curl_commands(text: str) -> list[str]:
    blocks = re.findall(r"```sh\n(.*?)```", text, re.S)
    joined = "\n".join(block.replace("\\\n", " ") for block in blocks)
    return [line for line in joined.splitlines() if line.lstrip().startswith("curl ")]


def test_every_management_operation_has_a_curl_example() -> None:
    examples = set()
    for command in _curl_commands(_section("Examples")):
        url = URL.search(command)
        assert url is not None, command
        method = METHOD.search(command)
        path = re.sub(r"\$[A-Z_]+", "{}", url.group(1))
        examples.add((method.group(1) if method else "GET", path))

    assert set(_management_operations()) <= examples, set(_management_operations()) - examples


def test_the_table_of_operations_gives_each_its_documented_scope() -> None:
    rows = {
        (method, re.sub(r"\{[a-z_]+\}", "{}", path)): scope
        for method, path, scope in TABLE_ROW.findall(_section("Operations"))
    }

    assert rows == _management_operations()
