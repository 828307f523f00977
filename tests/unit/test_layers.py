"""The package layering: ``cli -> api -> core -> {frontend, passes, ad, batch, emit, backend}
-> rules -> ir -> errors``, and ``runtime/`` (``s2s_runtime``) importing nothing of s2s.

Every ``.py`` file under ``s2s/`` and ``runtime/`` is read with ``ast``; every ``import`` and
``from ... import`` anywhere in it (module level, inside functions, under ``if``/``try``),
relative ones resolved, is checked:

* a module imports only modules of its own layer or of a lower one (the six packages of
  the middle layer are one layer); ``s2s_runtime`` is below every layer and may be
  imported by all;
* ``s2s_runtime`` imports nothing of ``s2s``;
* no module imports another module's private (underscore) name, except where listed in
  ``PRIVATE_EXCEPTIONS`` with the reason.

A failure names ``file:line`` and the two modules.
"""
from __future__ import annotations

import ast
import textwrap
from pathlib import Path
from typing import Iterator, List, Optional, Tuple

import pytest

REPO = Path(__file__).resolve().parents[2]

#: top to bottom; a module may import its own layer and the layers after it
LAYERS = (
    ("cli", ("s2s.cli", "s2s.__main__")),
    # the public face: the thin transforms and the public modules users import by path
    ("api", ("s2s.api", "s2s.check", "s2s.cuda", "s2s.tree_util", "s2s.data_parallel",
             "s2s.interop")),
    ("core", ("s2s.core",)),
    ("middle", ("s2s.frontend", "s2s.passes", "s2s.ad", "s2s.batch", "s2s.emit",
                "s2s.backend")),
    ("rules", ("s2s.rules",)),
    ("ir", ("s2s.ir",)),
    ("base", ("s2s.errors", "s2s.version")),
)
_ORDER = [name for name, _ in LAYERS]

#: (importing module prefix, imported module prefix): private names imported across modules
#: that are allowed, with why
PRIVATE_EXCEPTIONS = {
    # every public function of s2s_runtime is a primitive the transforms must know (``s2s
    # rules`` lists them, ``cli/modes.py``): helpers the run-time modules share stay private
    ("s2s_runtime", "s2s_runtime"):
        "a public name in s2s_runtime is a primitive; shared helpers stay underscored",
}


def layer_of(module: str) -> Optional[str]:
    """The layer of a module of s2s (``"runtime"`` for ``s2s_runtime``), None for others."""
    if module == "s2s_runtime" or module.startswith("s2s_runtime."):
        return "runtime"
    if module == "s2s":  # the package itself: the public names
        return "api"
    best = None
    for name, prefixes in LAYERS:
        for prefix in prefixes:
            if module == prefix or module.startswith(prefix + "."):
                if best is None or len(prefix) > len(best[1]):
                    best = (name, prefix)
    return best[0] if best else None


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[0] == "runtime":
        parts[0] = "s2s_runtime"
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def imports(path: Path, module: str, known: set) -> Iterator[Tuple[int, str, Optional[str]]]:
    """``(line, imported module, name or None)`` for every import in the file.  For ``from
    m import x`` where ``m.x`` is a module (``known``), the module is ``m.x`` and the name
    None."""
    tree = ast.parse(path.read_text(), str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield node.lineno, a.name, None
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")
                if path.name != "__init__.py":
                    base = base[:-1]
                base = base[:len(base) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            for a in node.names:
                full = f"{source}.{a.name}"
                if full in known:
                    yield node.lineno, full, None
                else:
                    yield node.lineno, source, a.name


def _allowed_private(importer: str, imported: str) -> bool:
    def under(m, prefix):
        return m == prefix or m.startswith(prefix + ".")
    return any(under(importer, a) and under(imported, b) for a, b in PRIVATE_EXCEPTIONS)


def violations(root: Path) -> List[str]:
    """Every import of ``root/s2s`` and ``root/runtime`` against the layering, as
    ``"file:line: what"``."""
    files = sorted(list((root / "s2s").rglob("*.py")) + list((root / "runtime").rglob("*.py")))
    files = [f for f in files if "__pycache__" not in f.parts]
    known = {module_name(f, root) for f in files}
    out = []
    for f in files:
        module = module_name(f, root)
        mine = layer_of(module)
        where = f.relative_to(root)
        if mine is None:
            out.append(f"{where}:1: {module} is in no layer (add it to LAYERS)")
            continue
        for line, target, name in imports(f, module, known):
            theirs = layer_of(target)
            if theirs is None:
                continue  # not s2s
            what = target + (f".{name}" if name else "")
            if mine == "runtime":
                if theirs != "runtime":
                    out.append(f"{where}:{line}: s2s_runtime imports s2s: {what}")
                continue
            if theirs != "runtime" and _ORDER.index(theirs) < _ORDER.index(mine):
                out.append(f"{where}:{line}: {module} ({mine}) imports a higher layer: "
                           f"{what} ({theirs})")
            if name and name.startswith("_") and not name.startswith("__") \
                    and target != module and not _allowed_private(module, target):
                out.append(f"{where}:{line}: {module} imports the private name {what}")
    return out


def test_every_import_goes_down_and_no_private_names_cross_modules():
    found = violations(REPO)
    assert not found, "layering violations:\n" + "\n".join(found)


def _fake_tree(tmp_path: Path, files: dict) -> Path:
    for rel, text in files.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text))
    for d in ("s2s", "runtime"):
        (tmp_path / d).mkdir(exist_ok=True)
        (tmp_path / d / "__init__.py").touch()
    return tmp_path


def test_the_check_names_an_upward_import_and_its_line(tmp_path):
    root = _fake_tree(tmp_path, {
        "s2s/ir/__init__.py": "",
        "s2s/ir/nodes.py": "import math\n",
        "s2s/core/__init__.py": "",
        "s2s/core/pipeline.py": "from ..ir import nodes\n",  # down: fine
        "s2s/rules/__init__.py": "",
        "s2s/rules/table.py": """\
            from ..ir import nodes

            def late():
                from ..core import pipeline  # up, inside a function
                return pipeline
            """,
    })
    assert violations(root) == [
        "s2s/rules/table.py:4: s2s.rules.table (rules) imports a higher layer: "
        "s2s.core.pipeline (core)"]


def test_the_check_names_runtime_importing_s2s_and_private_names(tmp_path):
    root = _fake_tree(tmp_path, {
        "runtime/helpers.py": "import numpy\nimport s2s.errors\n",
        "s2s/errors.py": "",
        "s2s/passes/__init__.py": "",
        "s2s/passes/ssa.py": "def _rename_all(): pass\n",
        "s2s/passes/copyprop.py": "\nfrom .ssa import _rename_all\n",
        "s2s/stray.py": "",
    })
    assert sorted(violations(root)) == sorted([
        "runtime/helpers.py:2: s2s_runtime imports s2s: s2s.errors",
        "s2s/passes/copyprop.py:2: s2s.passes.copyprop imports the private name "
        "s2s.passes.ssa._rename_all",
        "s2s/stray.py:1: s2s.stray is in no layer (add it to LAYERS)"])


def test_layers_of_the_public_paths():
    assert layer_of("s2s") == layer_of("s2s.cuda") == layer_of("s2s.tree_util") == "api"
    assert layer_of("s2s.cli.main") == "cli" and layer_of("s2s.__main__") == "cli"
    assert layer_of("s2s.backend.llvm.lower") == "middle"
    assert layer_of("s2s_runtime.tree") == "runtime" and layer_of("numpy") is None


# --- every module imports first -------------------------------------------------------------
# A module imported before any other of s2s (a user's `from s2s.backend.llvm.ops import
# arrays`, a test file that starts there) must not meet a half-initialised module: the call
# table's handler modules register from the table's own import, so their packages import the
# table first.

_IMPORT_FIRST = textwrap.dedent('''
    import importlib, sys
    bad = []
    for name in sys.argv[1:]:
        for m in [m for m in sys.modules if m == "s2s" or m.startswith("s2s.")]:
            del sys.modules[m]
        try:
            importlib.import_module(name)
        except Exception as e:
            bad.append(f"{name}: {type(e).__name__}: {e}")
    print("\\n".join(bad))
''')

#: modules that register handlers or read the registries, imported first (the default run)
FIRST_IMPORTS = ["s2s.backend.llvm.ops.arrays", "s2s.backend.llvm.ops.numbers",
                 "s2s.backend.llvm.ops.build", "s2s.backend.llvm.derivs.index_transposes",
                 "s2s.backend.llvm.batching.per_example", "s2s.backend.llvm.lower.function",
                 "s2s.rules.statistics", "s2s.batch.rules", "s2s.cli.modes"]


def _modules_importing_first(names):
    import subprocess
    import sys
    r = subprocess.run([sys.executable, "-c", _IMPORT_FIRST, *names], capture_output=True,
                       text=True, cwd=str(REPO))
    assert r.returncode == 0, r.stderr
    return [line for line in r.stdout.splitlines() if line]


def test_registering_modules_import_first():
    assert _modules_importing_first(FIRST_IMPORTS) == []


@pytest.mark.slow
def test_every_module_imports_first():
    names = []
    for p in sorted((REPO / "s2s").rglob("*.py")):
        parts = p.relative_to(REPO).with_suffix("").parts
        if parts[-1] != "__main__":
            names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    assert _modules_importing_first(names) == []
