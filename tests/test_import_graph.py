"""No import circles in ``service/`` and ``plugins/``; plugins import only ``service``.

The graph is read from the source (``ast``), not from ``sys.modules``: every ``import``
and ``from … import`` anywhere in a module counts, at module level, inside a function or
under ``if TYPE_CHECKING:``. A circle hidden in a function still ties two modules
together (neither can be understood, moved or tested without the other), so it fails
here like any other.

An edge goes to the module an import names: ``from a.b import c`` is an edge to ``a.b.c``
when ``c`` is a module of the scanned tree, else to ``a.b``; relative imports are
resolved against the importing module's package. Importing ``a.b.c`` also runs
``a/__init__.py`` and ``a/b/__init__.py``, but those implicit parent imports are not
edges: a package always finishes its own ``__init__`` before any of its submodules can be
imported from outside, so they cannot close a circle the explicit edges do not show.
Imports of anything outside the scanned tree (the standard library, litestar, …) are
ignored.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("service", "plugins")

Graph = dict[str, set[str]]


def module_files(root: Path, packages: Iterable[str]) -> dict[str, tuple[Path, bool]]:
    """Dotted module name -> (file, is a package ``__init__``) for every ``.py`` file."""
    modules: dict[str, tuple[Path, bool]] = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            if is_package:
                parts.pop()
            modules[".".join(parts)] = (path, is_package)
    return modules


def imported_names(module: str, is_package: bool, node: ast.Import | ast.ImportFrom) -> list[str]:
    """Every dotted name one import statement may refer to (modules or module.attribute)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        package = module.split(".") if is_package else module.split(".")[:-1]
        package = package[: len(package) - (node.level - 1)]
        base = ".".join([*package, base] if base else package)
    return [f"{base}.{alias.name}" for alias in node.names if alias.name != "*"] or [base]


def import_graph(root: Path, packages: Iterable[str] = PACKAGES) -> Graph:
    """Module -> the scanned modules it imports (see the module docstring for the rules)."""
    modules = module_files(root, packages)
    graph: Graph = {}
    for module, (path, is_package) in modules.items():
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import | ast.ImportFrom):
                for name in imported_names(module, is_package, node):
                    target = _known_prefix(name, modules)
                    if target is not None and target != module:
                        targets.add(target)
        graph[module] = targets
    return graph


def _known_prefix(name: str, modules: dict[str, tuple[Path, bool]]) -> str | None:
    """The longest prefix of ``name`` that is a scanned module (``a.b.attr`` -> ``a.b``)."""
    parts = name.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in modules:
            return candidate
        parts.pop()
    return None


def cycles(graph: Graph) -> list[list[str]]:
    """One concrete circle (``[a, b, …, a]``) per strongly connected group of modules."""
    found = []
    for group in _strongly_connected(graph):
        if len(group) > 1:
            found.append(_circle_within(graph, set(group)))
    return sorted(found)


def _strongly_connected(graph: Graph) -> Iterator[list[str]]:
    """Tarjan's algorithm, iterative (no recursion limit on a deep graph)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == node:
                            break
                    yield sorted(group)
            elif child not in index:
                index[child] = low[child] = counter
                counter += 1
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(graph.get(child, ())))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])


def _circle_within(graph: Graph, group: set[str]) -> list[str]:
    """A shortest circle through the group's first module (breadth-first, inside it)."""
    start = min(group)
    previous: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for child in sorted(graph[node] & group):
                if child == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(previous[path[-1]])
                    return [*reversed(path), start]
                if child not in previous:
                    previous[child] = node
                    following.append(child)
        frontier = following
    raise AssertionError(f"no circle in the strongly connected group {sorted(group)}")


def past_service(graph: Graph) -> list[tuple[str, str]]:
    """(plugin module, service module) for every plugin import of a module under
    ``service`` other than the package itself (whose ``__init__`` is the plugin API)."""
    return sorted(
        (module, target)
        for module, targets in graph.items()
        if module.split(".")[0] == "plugins"
        for target in targets
        if target.split(".")[0] == "service" and target != "service"
    )


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


@pytest.fixture(scope="module")
def graph() -> Graph:
    return import_graph(REPO)


def test_the_scan_sees_the_whole_tree(graph: Graph) -> None:
    # An empty or partial scan would pass the circle test for nothing.
    assert len(graph) >= 100
    assert {"service", "service.app", "plugins.huawei", "service.planning.recommend"} <= set(graph)
    assert "service.api.openapi" in graph["service.app"]
    # function-local and TYPE_CHECKING imports are edges too
    assert "service.app" in graph["service.cli.connect"]  # inside shipped_backend()
    assert "service.sizing.presets" in graph["service.hooks.specs"]  # under TYPE_CHECKING


def test_no_import_circles(graph: Graph) -> None:
    found = cycles(graph)
    assert not found, "import circles:\n" + "\n".join(" -> ".join(c) for c in found)


def test_plugins_import_only_the_service_package(graph: Graph) -> None:
    found = past_service(graph)
    assert not found, f"plugins must import only `service` (its public names): {found}"


def test_a_hidden_circle_is_found(tmp_path: Path) -> None:
    """The check can fail: a circle closed by a function-local import, a TYPE_CHECKING
    import and a relative ``from . import module`` is reported, whole and in order."""
    _write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/a.py": "def f():\n    from pkg.sub import b\n    return b\n",
            "pkg/sub/__init__.py": "",
            "pkg/sub/b.py": (
                "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..c import C\n"
            ),
            "pkg/c.py": "from . import a\nclass C: ...\n",
            "pkg/d.py": "import os\nfrom pkg.a import f\nfrom pkg.sub import b as _b\n",
        },
    )
    graph = import_graph(tmp_path, ("pkg",))
    assert graph["pkg.sub.b"] == {"pkg.c"}
    assert graph["pkg.d"] == {"pkg.a", "pkg.sub.b"}
    assert cycles(graph) == [["pkg.a", "pkg.sub.b", "pkg.c", "pkg.a"]]


def test_a_plugin_reaching_past_service_is_found(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "service/__init__.py": "from service.models import Provider\n",
            "service/models.py": "class Provider: ...\n",
            "plugins/__init__.py": "",
            "plugins/cloud.py": "from service import Provider\nfrom service.models import X\n",
        },
    )
    graph = import_graph(tmp_path)
    assert past_service(graph) == [("plugins.cloud", "service.models")]
    assert cycles(graph) == []
