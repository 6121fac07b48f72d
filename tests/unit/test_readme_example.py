"""The README's library example runs as printed."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"


def _example() -> str:
    text = README.read_text(encoding="utf-8")
    match = re.search(r"<!-- example: library -->\s*```python\n(.*?)```", text, re.DOTALL)
    assert match is not None, "the README has lost its library example"
    return match.group(1)


def test_readme_library_example_runs_and_prints_its_results(
    capsys: pytest.CaptureFixture[str],
) -> None:
    exec(compile(_example(), str(README), "exec"), {"__name__": "readme_example"})
    out = capsys.readouterr().out
    assert re.search(r"^stored sub_[0-9a-z]{29}$", out, re.MULTILINE)
    assert "Please enter a valid email address." in out
