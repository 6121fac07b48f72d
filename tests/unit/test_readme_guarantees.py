"""Each promise of the README's "Guarantees" section names the tests that hold it; those
tests must exist, so the section cannot outlive them."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CITATION = re.compile(r"`(tests/[\w/]+\.py)::(test_\w+)`")


def _guarantees() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    start = readme.index("## Guarantees\n")
    end = readme.index("\n## ", start + 1)
    return readme[start:end]


def test_every_guarantee_names_at_least_one_test() -> None:
    promises = [line for line in _guarantees().splitlines() if line.startswith("- **")]
    section = _guarantees()
    assert len(promises) >= 8
    for promise, following in zip(promises, [*promises[1:], None], strict=True):
        body = section[section.index(promise) : section.index(following) if following else None]
        assert CITATION.search(body), f"no test named for: {promise}"


def test_every_test_a_guarantee_names_exists() -> None:
    cited = CITATION.findall(_guarantees())
    assert cited
    for path, name in cited:
        source = (ROOT / path).read_text(encoding="utf-8")
        assert re.search(rf"^(async )?def {name}\(", source, re.MULTILINE), f"{path}::{name}"
