"""Check the import structure of the project's apps; exit 1 and print every violation.

Rules, each violation printed with the modules involved and the file:line of every import on
its path:

1. cycle: no import cycle runs through modules of different apps.
2. services-tasks: an app's services (services.py or the services/ package) and its tasks
   (tasks.py or tasks/) do not import each other both ways, directly or through other modules of
   the same app.
3. tutor: no app imports `tutor`, the project wiring (settings, urls, asgi/wsgi, celery, startup,
   server); tutor may import any app.
4. core: `core` imports no app.
5. layers: an app imports only apps in a layer below its own in LAYERS (safety, insights -> conversations ->
   learning -> memory -> llm -> accounts -> core; llm reads accounts, as usage and costs are
   the students'); privacy and web sit on top and may import any app.

What counts as an import: every `import` and `from ... import` statement in an app's modules,
at module level or inside a function or method (a lazy import is still a dependency), and
`importlib.import_module("a.literal")`. Imports under `if TYPE_CHECKING:` are ignored: they never
run. Importing `a.b.c` is a dependency on the module a.b.c (the longest prefix of the name that is
a module of the project), not on the packages a and a.b whose `__init__` runs first. Imports of
anything outside the apps and tutor are ignored, and so are tests/, scripts/ and bench/, which are
not apps.

Usage: python scripts/check_imports.py [--root DIR]   (DIR defaults to this repository)
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections import defaultdict, deque
from collections.abc import Iterable, Iterator
from itertools import pairwise
from pathlib import Path

LAYERS: tuple[tuple[str, ...], ...] = (
    ("privacy", "web"),
    ("safety", "insights"),
    ("conversations",),
    ("learning",),
    ("memory",),
    ("llm",),
    ("accounts",),
    ("core",),
)
TOP = frozenset(LAYERS[0])
WIRING = "tutor"
RANK = {app: rank for rank, layer in enumerate(LAYERS) for app in layer}
PACKAGES = (*RANK, WIRING)
SKIP_DIRS = frozenset({"__pycache__", "node_modules"})

Site = tuple[str, int]  # (path relative to the root, line)
Graph = dict[str, dict[str, list[Site]]]  # importer -> imported -> where


def find_modules(root: Path) -> dict[str, Path]:
    """Map the dotted name of every .py file in the apps and tutor to its path."""
    modules: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            if any(part in SKIP_DIRS or part.startswith(".") for part in parts):
                continue
            if parts[-1] == "__init__":
                parts = parts[:-1]
            modules[".".join(parts)] = path
    return modules


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _import_module_literal(call: ast.Call) -> str | None:
    """The absolute module name of `import_module("a.b")` or `importlib.import_module("a.b")`, else None."""
    called = getattr(call.func, "id", None) or getattr(call.func, "attr", None)
    if called != "import_module" or not call.args or not isinstance(call.args[0], ast.Constant):
        return None
    name = call.args[0].value
    return name if isinstance(name, str) and not name.startswith(".") else None


def imported_names(tree: ast.Module, package: str) -> Iterator[tuple[str, int]]:
    """Yield (absolute dotted name, line) for each import in `tree`; `package` anchors relative ones.

    `from a import b` yields a.b, which resolve() shortens to `a` when b is not a module.
    """
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            skipped.update(id(inner) for stmt in node.body for inner in ast.walk(stmt))
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0]
                base = f"{anchor}.{base}" if base else anchor
            for alias in node.names:
                yield (base if alias.name == "*" else f"{base}.{alias.name}"), node.lineno
        elif isinstance(node, ast.Call) and (name := _import_module_literal(node)):
            yield name, node.lineno


def resolve(name: str, modules: dict[str, Path]) -> str | None:
    """The project module `name` depends on: its longest prefix that is a module, else None."""
    if name.split(".")[0] not in PACKAGES:
        return None
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        candidate = ".".join(parts[:end])
        if candidate in modules:
            return candidate
    return parts[0]


def build_graph(root: Path) -> Graph:
    """Every project module's imports of other project modules, with where each happens."""
    modules = find_modules(root)
    graph: Graph = defaultdict(lambda: defaultdict(list))
    for module, path in modules.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for name, line in imported_names(tree, package):
            target = resolve(name, modules)
            site = (path.relative_to(root).as_posix(), line)
            if target is not None and target != module and site not in graph[module][target]:
                graph[module][target].append(site)
    return graph


def app_of(module: str) -> str:
    return module.split(".")[0]


def shortest_path(
    graph: Graph, sources: Iterable[str], targets: set[str], within: str | None = None
) -> list[str] | None:
    """The shortest import chain from one of `sources` to one of `targets` (optionally inside one app)."""
    previous: dict[str, str | None] = {source: None for source in sources}
    queue = deque(previous)
    while queue:
        node = queue.popleft()
        if node in targets:
            chain = [node]
            while (before := previous[chain[-1]]) is not None:
                chain.append(before)
            return chain[::-1]
        for nxt in graph.get(node, {}):
            if nxt not in previous and (within is None or app_of(nxt) == within):
                previous[nxt] = node
                queue.append(nxt)
    return None


def describe(graph: Graph, chain: list[str]) -> str:
    """`chain` as 'a -> b -> c' followed by the file:line of each import along it."""
    lines = [" -> ".join(chain)]
    for importer, imported in pairwise(chain):
        path, line = graph[importer][imported][0]
        lines.append(f"    {path}:{line} imports {imported}")
    return "\n".join(lines)


def cross_app_cycles(graph: Graph) -> Iterator[str]:
    """Rule 1: each distinct shortest cycle that closes through an import between two apps."""
    seen: set[frozenset[str]] = set()
    for importer, targets in sorted(graph.items()):
        for imported in sorted(targets):
            if app_of(importer) == app_of(imported):
                continue
            back = shortest_path(graph, [imported], {importer})
            if back is None:
                continue
            cycle = [importer, *back]
            if frozenset(cycle) not in seen:
                seen.add(frozenset(cycle))
                yield f"cycle between apps: {describe(graph, cycle)}"


def services_tasks_cycles(graph: Graph) -> Iterator[str]:
    """Rule 2: an app whose services reach its tasks and whose tasks reach its services."""
    nodes = set(graph) | {module for targets in graph.values() for module in targets}
    for app in sorted({app_of(module) for module in nodes}):
        services = {m for m in nodes if m == f"{app}.services" or m.startswith(f"{app}.services.")}
        tasks = {m for m in nodes if m == f"{app}.tasks" or m.startswith(f"{app}.tasks.")}
        there = shortest_path(graph, sorted(services), tasks, within=app)
        back = shortest_path(graph, sorted(tasks), services, within=app)
        if there and back:
            yield f"services-tasks cycle in {app}: {describe(graph, there)}\n  and back: {describe(graph, back)}"


def edge_rules(graph: Graph) -> Iterator[str]:
    """Rules 3, 4 and 5, one message per import statement that breaks them."""
    for importer, targets in sorted(graph.items()):
        source = app_of(importer)
        for imported, sites in sorted(targets.items()):
            target = app_of(imported)
            if source in (target, WIRING):
                continue
            if target == WIRING:
                rule = f"app imports the project wiring: {importer} -> {imported}"
            elif source == "core":
                rule = f"core imports an app: {importer} -> {imported}"
            elif source not in TOP and RANK[target] <= RANK[source]:
                rule = f"layer order broken ({source} may not import {target}): {importer} -> {imported}"
            else:
                continue
            yield "\n".join([rule, *(f"    {path}:{line}" for path, line in sites)])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent)
    root = parser.parse_args(argv).root.resolve()
    graph = build_graph(root)
    violations = [*cross_app_cycles(graph), *services_tasks_cycles(graph), *edge_rules(graph)]
    for violation in violations:
        print(violation)
    if violations:
        print(f"check_imports: {len(violations)} violation(s) under {root}", file=sys.stderr)
        return 1
    print(f"check_imports: OK ({len(graph)} modules with project imports under {root})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
