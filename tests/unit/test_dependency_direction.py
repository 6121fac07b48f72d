"""Dependencies point inward (docs/architecture.md, "Layers"): the domain, the ports and
the services import only the layers below them, and only the few libraries named here;
no package imports back up the picture, so the packages form no loop; and the entry
points reach the ports through services."""

from __future__ import annotations

import ast
import functools
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src" / "intake"

# What each inner layer may import of intake: itself and the layers below it. `service`
# never sees an adapter, an entry point, a composition root, the Prometheus instruments
# (metrics.py reads services, not the reverse) or `presentation` (which formats what the
# services return for the entry points, and so imports them).
LAYERS = {
    "domain": frozenset({"domain"}),
    "ports": frozenset({"domain", "ports"}),
    "service": frozenset({"domain", "ports", "service"}),
    "adapters": frozenset({"domain", "ports", "adapters"}),
}
# The libraries an inner layer may import besides the standard library, each for a
# reason; no web framework, driver, template engine or serialisation library.
LIBRARIES = {
    # attrs: the values; email_validator: an address's syntax (validation.py);
    # publicsuffixlist: an origin's registrable domain (origins.py); puremagic: an
    # upload's type from its bytes (sniffing.py); python_multipart: the multipart
    # parser the payload rules drive (payload/).
    "domain": frozenset(
        {"attrs", "email_validator", "publicsuffixlist", "puremagic", "python_multipart"}
    ),
    "ports": frozenset({"attrs"}),
    # anyio: the relay's task groups and the template renderer's threads.
    "service": frozenset({"attrs", "anyio"}),
}
# Never in an inner layer, whatever the lists above come to say.
FORBIDDEN = frozenset(
    {
        "starlette",
        "uvicorn",
        "psycopg",
        "psycopg_pool",
        "redis",
        "cattrs",
        "httpx",
        "jinja2",
        "prometheus_client",
    }
)


def _imported(path: Path) -> Iterator[str]:
    """Every absolute import of a module, at any depth (under TYPE_CHECKING too)."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module


@functools.cache
def _imports(path: Path) -> frozenset[str]:
    """The top-level names imported, and `intake.<package>` for intake's own."""
    names: set[str] = set()
    for module in _imported(path):
        parts = module.split(".")
        names.add(parts[0])
        if parts[0] == "intake" and len(parts) > 1:
            names.add(".".join(parts[:2]))
    return frozenset(names)


def _layer_modules(layer: str) -> list[Path]:
    return sorted((SRC / layer).rglob("*.py"))


def _cases(layers: tuple[str, ...]) -> list[tuple[str, Path]]:
    return [(layer, path) for layer in layers for path in _layer_modules(layer)]


def _id(case: object) -> str:
    return str(case.relative_to(SRC)) if isinstance(case, Path) else str(case)


@pytest.mark.parametrize(("layer", "path"), _cases(tuple(LAYERS)), ids=_id)
def test_a_layer_imports_only_itself_and_the_layers_below(layer: str, path: Path) -> None:
    ours = {name.split(".")[1] for name in _imports(path) if name.startswith("intake.")}
    assert ours <= LAYERS[layer], f"{path} imports intake.{sorted(ours - LAYERS[layer])}"


@pytest.mark.parametrize(("layer", "path"), _cases(tuple(LIBRARIES)), ids=_id)
def test_an_inner_layer_imports_only_its_named_libraries(layer: str, path: Path) -> None:
    foreign = {
        name for name in _imports(path) if "." not in name and name not in sys.stdlib_module_names
    } - {"intake", "__future__"}
    assert not foreign & FORBIDDEN, f"{path} imports {sorted(foreign & FORBIDDEN)}"
    assert foreign <= LIBRARIES[layer], f"{path} imports {sorted(foreign - LIBRARIES[layer])}"


def test_the_named_libraries_hold_none_that_is_forbidden() -> None:
    assert not frozenset().union(*LIBRARIES.values()) & FORBIDDEN


def _package_graph() -> dict[str, set[str]]:
    """intake's packages and top-level modules, each with those it imports."""
    graph: dict[str, set[str]] = {}
    for path in SRC.rglob("*.py"):
        package = path.relative_to(SRC).parts[0].removesuffix(".py")
        others = {name.split(".")[1] for name in _imports(path) if name.startswith("intake.")}
        graph.setdefault(package, set()).update(others - {package})
    return graph


def test_the_packages_import_one_another_without_a_loop() -> None:
    graph = _package_graph()
    done: set[str] = set()

    def visit(package: str, trail: tuple[str, ...]) -> None:
        assert package not in trail, "a loop: " + " -> ".join((*trail, package))
        if package in done:
            return
        for other in sorted(graph.get(package, ())):
            visit(other, (*trail, package))
        done.add(package)

    for package in sorted(graph):
        visit(package, ())
    assert {"domain", "ports", "service", "metrics", "entrypoints"} <= done


def test_the_layers_are_not_empty() -> None:
    assert all(len(_layer_modules(layer)) >= 10 for layer in LAYERS)


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
