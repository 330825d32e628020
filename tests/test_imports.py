"""The package's import structure: no import circle, no private name across subpackages, no
private scikit-learn API.

Every import statement counts, also the ones inside functions (a "local import to avoid a
cycle" is still a cycle in the design).
"""

from __future__ import annotations

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent / "skfair_audit"

#: Underscore names of scikit-learn allowed although its documentation lists them (none: the
#: library uses none of them).
SKLEARN_DOCUMENTED = set()


def _modules():
    """``{dotted module name: (path, is_package)}`` of the library."""
    out = {}
    for path in ROOT.rglob("*.py"):
        parts = ["skfair_audit", *path.relative_to(ROOT).with_suffix("").parts]
        is_package = parts[-1] == "__init__"
        if is_package:
            parts = parts[:-1]
        out[".".join(parts)] = (path, is_package)
    return out


def _imports(name, path, is_package):
    """``(target module, imported name, line)`` of every import in the file."""
    package = name if is_package else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            for alias in node.names:
                yield module, alias.name, node.lineno
        elif isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, None, node.lineno


def _graph():
    modules = _modules()
    graph = {name: set() for name in modules}
    for name, (path, is_package) in modules.items():
        for module, imported, _ in _imports(name, path, is_package):
            if not module.startswith("skfair_audit"):
                continue
            target = f"{module}.{imported}" if imported and f"{module}.{imported}" in modules \
                else module
            if target in modules and target != name:
                graph[name].add(target)
    return graph


def _cycles(graph):
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on_stack, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_circles():
    assert _cycles(_graph()) == []


def test_the_cycle_detector_finds_a_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]


def test_no_private_name_imported_from_another_subpackage():
    """Private names stay in their subpackage (``_utils`` and the shared private modules
    ``_resampling``, ``_version`` excepted); a top-level module is its own subpackage."""
    hits = []
    for name, (path, is_package) in _modules().items():
        parts = name.split(".")
        own = parts[1] if len(parts) > 1 else ""
        for module, imported, line in _imports(name, path, is_package):
            target_parts = module.split(".")
            if target_parts[0] != "skfair_audit":
                continue
            target = target_parts[1] if len(target_parts) > 1 else ""
            if target == own or target in ("_utils", "_resampling", "_version"):
                continue
            if imported and imported.startswith("_") and not imported.startswith("__"):
                hits.append(f"{path.name}:{line} {module}.{imported}")
    assert hits == []


def test_public_scikit_learn_api_only():
    hits = []
    for name, (path, is_package) in _modules().items():
        for module, imported, line in _imports(name, path, is_package):
            if module.split(".")[0] != "sklearn":
                continue
            private_module = any(p.startswith("_") for p in module.split(".")[1:])
            private_name = bool(imported) and imported.startswith("_") and (
                imported not in SKLEARN_DOCUMENTED)
            if private_module or private_name:
                hits.append(f"{name}:{line} from {module} import {imported}")
    assert hits == []


#: What the audit subpackages may import from the rest of the library: the shared result
#: protocol and the shared helpers, never each other.
AUDIT_SHARED = {"results", "_utils", "_resampling", "_progress"}


def _foreign_imports(modules, subpackage):
    """``file:line target`` of every import of ``skfair_audit.<subpackage>`` that reaches
    another part of the library than itself and :data:`AUDIT_SHARED`."""
    hits = []
    for name, (path, is_package) in modules.items():
        if name.split(".")[1:2] != [subpackage]:
            continue
        for module, _, line in _imports(name, path, is_package):
            parts = module.split(".")
            if parts[0] != "skfair_audit":
                continue
            target = parts[1] if len(parts) > 1 else ""
            if target != subpackage and target not in AUDIT_SHARED:
                hits.append(f"{path.name}:{line} {target}")
    return hits


def test_faith_and_group_share_only_the_result_module():
    """Acceptance of issue 23: no module of ``faith`` imports from ``group`` or vice versa;
    both import only the shared result protocol and helpers (every import statement counts,
    also those inside functions)."""
    modules = _modules()
    for subpackage in ("faith", "group"):
        assert _foreign_imports(modules, subpackage) == [], subpackage
    assert any(name.startswith("skfair_audit.faith.") for name in modules)
    assert any(name.startswith("skfair_audit.group.") for name in modules)


def test_the_foreign_import_check_finds_one(tmp_path):
    folder = tmp_path / "faith"
    folder.mkdir()
    path = folder / "_probe.py"
    path.write_text("from ..results import Verdict\n\n\ndef f():\n"
                    "    from ..group import ResultTable\n    import skfair_audit.group\n")
    modules = {"skfair_audit.faith._probe": (path, False)}
    assert _foreign_imports(modules, "faith") == ["_probe.py:5 group", "_probe.py:6 group"]
    assert _foreign_imports(modules, "group") == []
