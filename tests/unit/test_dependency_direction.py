"""Dependencies point inward: the domain and the ports stay pure (no web framework, driver
or serialisation library), and the entry points reach the ports through services."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src" / "intake"
FORBIDDEN = (
    "starlette",
    "uvicorn",
    "psycopg",
    "psycopg_pool",
    "redis",
    "cattrs",
    "httpx",
    "jinja2",
)
PURE_PACKAGES = ("domain", "ports")
# The composition roots: each opens the adapters of one use of intake.
COMPOSITIONS = (
    "intake.resources",
    "intake.admin_runtime",
    "intake.relay_runtime",
    "intake.serve_runtime",
    "intake.library_runtime",
    "intake.accounts_runtime",
)


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
    outer = {"intake.adapters", "intake.entrypoints", "intake.service", *COMPOSITIONS}
    assert not _imports(path) & outer


def test_the_pure_packages_are_not_empty() -> None:
    assert len(_modules()) >= 10


# An entry point reads a request or a command line, calls a service and writes the
# answer: it reaches the store and the blob store only through services. From the ports
# it may name only what a caller must name to choose how a store opens, or to catch its
# failures.
PORT_VOCABULARY = frozenset(
    {
        "StoreOpening",
        "StoreNotPrepared",
        "BlobStoreUnavailable",
        "BlobStoreError",
        "BlobNotFound",
    }
)


def _entrypoint_modules() -> list[Path]:
    return sorted((SRC / "entrypoints").rglob("*.py"))


def _intake_imports(path: Path) -> list[tuple[str, str]]:
    """(module, name) of every `intake.` import, at any depth; name is "" for `import`."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[tuple[str, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(a.name, "") for a in node.names if a.name.startswith("intake.")]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("intake."):
            found += [(str(node.module), alias.name) for alias in node.names]
    return found


@pytest.mark.parametrize("path", _entrypoint_modules(), ids=lambda p: str(p.relative_to(SRC)))
def test_entrypoint_imports_no_adapter(path: Path) -> None:
    adapters = [m for m, _ in _intake_imports(path) if m.split(".")[:2] == ["intake", "adapters"]]
    assert not adapters, f"{path} imports {adapters}"


@pytest.mark.parametrize("path", _entrypoint_modules(), ids=lambda p: str(p.relative_to(SRC)))
def test_entrypoint_names_no_port_but_its_vocabulary(path: Path) -> None:
    ports = [
        (module, name)
        for module, name in _intake_imports(path)
        if module.split(".")[:2] == ["intake", "ports"] and name not in PORT_VOCABULARY
    ]
    assert not ports, f"{path} imports {ports}: call a service instead"


def test_the_entrypoints_are_found() -> None:
    assert len(_entrypoint_modules()) >= 20
