"""The package's shape, checked with ``ast`` (issue 12).

* no import cycle among fastbleu modules, lazy imports (inside functions) included;
* no module imports a leading-underscore name from another fastbleu module, except
  between modules of the same subpackage;
* a floor plan that shows the pipeline (issue 25): at most 9 loose modules at the
  package root, one folder per metric under ``metrics/``, the input side of the
  metric seam written once (``corpus_score`` defined only in ``metrics/base.py``),
  and no code that finds a metric by ``hasattr`` or sets its state with ``setattr``.
  Modules are split by idea, not by a line count (the old 450-line cap is retired).

Rules, precisely:

* A module is a ``.py`` file under the package directory; ``a/__init__.py`` is the
  module ``fastbleu.a``.  Every ``import`` / ``from ... import`` statement counts,
  wherever it is (module level, function, class, ``if TYPE_CHECKING``, ``try``).
* Relative imports are resolved against the importing module's package.
  ``from P import x`` is an edge to the module ``P.x`` when that is a module, else
  to ``P`` (a package means its ``__init__``); ``import P.Q`` is an edge to ``P.Q``;
  ``importlib.import_module("P.Q")`` / ``import_module(".Q", __name__)`` with a
  literal name count too.  The implicit import of a module's *own parent packages*
  is not an edge: Python has started a package's ``__init__`` before any of its
  submodules, so a package ``__init__`` that re-exports its submodules is no cycle.
* A *private name* is an imported name starting with ``_`` (not a dunder such as
  ``__version__``) that is **not** a module: ``from ._kernels import counting`` and
  ``from . import _version`` import modules, and private *packages/modules* behind
  public functions (``_kernels``) are the designed seam, so a module path holding
  ``_kernels`` (or any ``_x`` module) is allowed.  ``from .score import _SMOOTH_CODES``
  is forbidden.
* Reaching into a module by attribute counts as importing the name: with
  ``from . import significance``, ``significance._check_count`` is forbidden too.
* *Same subpackage*: the importing and the imported module have the same parent
  package directory (``fastbleu/_kernels/a.py`` and ``fastbleu/_kernels/b.py``;
  ``fastbleu/tables/__init__.py`` counts as living in ``fastbleu/tables/``).  Two
  top-level modules ``fastbleu/a.py`` and ``fastbleu/b.py`` share the root package,
  which is not a subpackage: the exception does not apply to them.
"""

from __future__ import annotations

import ast
import pathlib

import fastbleu

PACKAGE = pathlib.Path(fastbleu.__file__).resolve().parent
ROOT = "fastbleu"
MAX_ROOT_MODULES = 9


def _module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join([ROOT, *parts])


def _modules() -> dict[str, pathlib.Path]:
    return {_module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))
            if "__pycache__" not in path.parts}


MODULES = _modules()


def _is_package(name: str) -> bool:
    return MODULES[name].name == "__init__.py"


def _package_of(name: str) -> str:
    """The package a module lives in (a package's ``__init__`` lives in itself)."""
    return name if _is_package(name) else name.rpartition(".")[0]


def _resolve(module: str, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    base = _package_of(module).split(".")
    if node.level > 1:
        base = base[:len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _literal_import_module(module: str, node: ast.Call) -> str | None:
    """The module named by ``import_module("literal"[, __name__])``, else None."""
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    if name != "import_module" or not node.args or \
            not isinstance(node.args[0], ast.Constant) or not isinstance(node.args[0].value, str):
        return None
    target = node.args[0].value
    if not target.startswith("."):
        return target
    level = len(target) - len(target.lstrip("."))
    return _resolve(module, ast.ImportFrom(module=target[level:] or None, names=[], level=level))


def _imports(module: str):
    """Yield ``(target_module, imported_name_or_None, lineno)`` for every import."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == ROOT:
                    yield alias.name, None, node.lineno
        elif isinstance(node, ast.ImportFrom):
            target = _resolve(module, node)
            if target.split(".")[0] != ROOT:
                continue
            for alias in node.names:
                submodule = f"{target}.{alias.name}"
                if submodule in MODULES:
                    yield submodule, None, node.lineno
                else:
                    yield target, None if alias.name == "*" else alias.name, node.lineno
        elif isinstance(node, ast.Call):
            target = _literal_import_module(module, node)
            if target and target.split(".")[0] == ROOT:
                yield target, None, node.lineno


def import_graph() -> dict[str, set[str]]:
    graph = {module: set() for module in MODULES}
    for module in MODULES:
        for target, _, _ in _imports(module):
            if target in MODULES and target != module:
                graph[module].add(target)
    return graph


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
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
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _same_subpackage(module: str, target: str) -> bool:
    return target in MODULES and _package_of(target) == _package_of(module) \
        and _package_of(module) != ROOT


def _module_aliases(module: str, tree: ast.AST) -> dict[str, str]:
    """Local names bound to fastbleu modules (``from . import significance as sig``)."""
    aliases = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname and alias.name in MODULES:
                    aliases[alias.asname] = alias.name
        elif isinstance(node, ast.ImportFrom):
            target = _resolve(module, node)
            for alias in node.names:
                if f"{target}.{alias.name}" in MODULES:
                    aliases[alias.asname or alias.name] = f"{target}.{alias.name}"
    return aliases


def private_imports() -> list[str]:
    """Every forbidden use of another module's private name: ``from m import _x``, and
    ``m._x`` where ``m`` is a fastbleu module imported by name."""
    found = []
    for module in MODULES:
        for target, name, lineno in _imports(module):
            if name is None or not _is_private(name) or target == module:
                continue
            if not _same_subpackage(module, target):
                found.append(f"{module}:{lineno} imports {name} from {target}")
        tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
        aliases = _module_aliases(module, tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                    and node.value.id in aliases and _is_private(node.attr):
                target = aliases[node.value.id]
                if target != module and not _same_subpackage(module, target):
                    found.append(f"{module}:{node.lineno} uses {node.attr} of {target}")
    return sorted(set(found))


def root_modules() -> list[str]:
    """The loose modules at the package root (``__init__`` included)."""
    return sorted(name for name, path in MODULES.items() if path.parent == PACKAGE)


def definitions_of(function: str) -> list[str]:
    """Every module that defines ``function`` (a def anywhere, methods included)."""
    found = []
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if any(isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == function
               for node in ast.walk(tree)):
            found.append(module)
    return sorted(found)


def metric_probes() -> list[str]:
    """``hasattr(metric..., ...)`` / ``setattr(metric..., ...)`` calls: code outside a metric
    finding one by its attributes or changing its state."""
    found = []
    for module, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                    node.func.id in ("hasattr", "setattr") and node.args:
                target = ast.unparse(node.args[0])
                attribute = node.args[1] if len(node.args) > 1 else None
                protocol = isinstance(attribute, ast.Constant) and \
                    str(attribute.value).startswith("__")  # iterable? (an argument's check)
                if not protocol and ("metric" in target.lower() or target == "bleu"):
                    found.append(f"{module}:{node.lineno} {ast.unparse(node)}")
    return sorted(found)


# -- the tests ------------------------------------------------------------------------

def test_the_package_is_found():
    assert len(MODULES) > 10 and ROOT in MODULES


def test_no_import_cycle():
    cycles = import_cycles(import_graph())
    report = "\n".join(" <-> ".join(cycle) for cycle in cycles)
    print(report)
    assert not cycles, f"import cycles among fastbleu modules:\n{report}"


def test_no_private_name_imported_across_modules():
    found = private_imports()
    report = "\n".join(found)
    print(report)
    assert not found, (f"{len(found)} leading-underscore names imported from another "
                       f"fastbleu module (outside one subpackage):\n{report}")


def test_the_root_holds_at_most_nine_loose_modules():
    found = root_modules()
    assert len(found) <= MAX_ROOT_MODULES, f"{len(found)} loose root modules: {found}"


def test_every_metric_has_a_folder_of_its_own():
    from fastbleu.metrics import METRICS

    for key, target in METRICS.items():
        module = target.split(":")[0]
        assert module.startswith(f"fastbleu.metrics.{key}."), (key, target)
        folder = PACKAGE / "metrics" / key
        assert (folder / "__init__.py").is_file() and (folder / "metric.py").is_file(), key
        assert (folder / "formula.py").is_file() and (folder / "score.py").is_file(), key
    # and no metric lives in a loose file of metrics/ (bleu_*.py, chrf_*.py ...)
    loose = sorted(p.name for p in (PACKAGE / "metrics").glob("*.py")
                   if p.stem.split("_")[0] in METRICS)
    assert not loose, loose


def test_the_input_side_of_the_seam_is_written_once():
    for function in ("corpus_score", "segment_statistics", "sentence_scores",
                     "statistics_batches"):
        found = [m for m in definitions_of(function) if m.startswith("fastbleu.metrics")]
        assert found == ["fastbleu.metrics.base"], (function, found)


def test_nothing_finds_a_metric_by_hasattr_or_sets_its_state_by_setattr():
    found = metric_probes()
    assert not found, "\n".join(found)


# -- the checker checks itself on small made-up modules --------------------------------

def _check_rules_on(tmp_path, files: dict[str, str]):
    """Run the three checks on a throwaway package ``fastbleu`` built from ``files``."""
    global PACKAGE, MODULES
    saved = PACKAGE, MODULES
    root = tmp_path / "fastbleu"
    for relative, text in {"__init__.py": "", **files}.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    PACKAGE = root
    MODULES = _modules()
    try:
        return import_cycles(import_graph()), private_imports(), root_modules()
    finally:
        PACKAGE, MODULES = saved


def test_checker_sees_lazy_and_relative_cycles(tmp_path):
    cycles, _, _ = _check_rules_on(tmp_path, {
        "a.py": "def f():\n    from .b import g\n",
        "b.py": "from fastbleu import a\n",
        "sub/__init__.py": "from .c import name\n",
        "sub/c.py": "from .. import d\nfrom .e import x\n",  # the parent __init__: no edge
        "sub/e.py": "",
        "d.py": "import fastbleu.sub.c\n",
        "f.py": "import importlib\nimportlib.import_module('.g', __name__)\n",
        "g.py": "from . import f\n",
        "h.py": "from .sub import name\n",  # a name of the package: its __init__
    })
    assert cycles == [["fastbleu.a", "fastbleu.b"], ["fastbleu.d", "fastbleu.sub.c"],
                      ["fastbleu.f", "fastbleu.g"]]


def test_checker_private_name_rules(tmp_path):
    _, found, _ = _check_rules_on(tmp_path, {
        "a.py": "_X = 1\n",
        "b.py": "from .a import _X\nfrom ._kernels import _k\nfrom . import _version\n"
                "from ._version import __version__\nfrom . import a as m\nm._X, m.public\n",
        "_version.py": "__version__ = '0'\n",
        "_kernels/__init__.py": "",
        "_kernels/_k.py": "",
        "_kernels/x.py": "from ._k import _inner\nfrom ..a import _X\n",
    })
    assert found == ["fastbleu._kernels.x:2 imports _X from fastbleu.a",
                     "fastbleu.b:1 imports _X from fastbleu.a",
                     "fastbleu.b:6 uses _X of fastbleu.a"]


def test_checker_counts_root_modules_and_finds_probes(tmp_path):
    _, _, found = _check_rules_on(tmp_path, {"a.py": "x = 1\n", "sub/__init__.py": "",
                                             "sub/b.py": "y = hasattr(metric, 'k')\n"})
    assert found == ["fastbleu", "fastbleu.a"]
    global PACKAGE, MODULES
    saved = PACKAGE, MODULES
    PACKAGE, MODULES = tmp_path / "fastbleu", None
    MODULES = _modules()
    try:
        assert metric_probes() == ["fastbleu.sub.b:1 hasattr(metric, 'k')"]
        assert definitions_of("nothing_defines_this") == []
    finally:
        PACKAGE, MODULES = saved
