"""docs/configuration.md's table of variables, made from their declarations."""

from __future__ import annotations

from intake.config.variables import VARIABLES

HEADER = "| variable | default | meaning |\n|---|---|---|\n"


def markdown_table() -> str:
    rows = (f"| `{var.name}` | {var.default_cell()} | {var.doc} |\n" for var in VARIABLES)
    return HEADER + "".join(rows)
