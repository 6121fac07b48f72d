"""The domain and the ports stay pure: no web framework, driver or serialisation library."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src" / "intake"
FORBIDDEN = ("starlette", "uvicorn", "psycopg", "psycopg_pool", "redis", "cattrs", "httpx")
PURE_PACKAGES = ("domain", "ports")


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
            if node.module.startswith("intake."):
                names.add(".".join(node.module.split(".")[:2]))
    return names


def _modules() -> list[Path]:
    return sorted(p for package in PURE_PACKAGES for p in (SRC / package).rglob("*.py"))


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(SRC)))
def test_pure_module_imports_no_framework_driver_or_serialiser(path: Path) -> None:
    imported = _imports(path)
    assert not imported & set(FORBIDDEN), f"{path} imports {imported & set(FORBIDDEN)}"


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(SRC)))
def test_pure_module_does_not_reach_into_outer_layers(path: Path) -> None:
    outer = {"intake.adapters", "intake.entrypoints", "intake.service", "intake.containers"}
    assert not _imports(path) & outer


def test_the_pure_packages_are_not_empty() -> None:
    assert len(_modules()) >= 10
