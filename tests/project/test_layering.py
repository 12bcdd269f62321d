"""The import layering: ``leir`` needs neither TVM nor Django (nor torch outside ``leir.frontend``);
``verifier`` and ``tuner`` need no Django.

Checked twice: dynamically, by importing every module of a package in a fresh interpreter and looking at
``sys.modules`` (this catches imports made through other modules); statically, by scanning every source
file's import statements (this catches imports inside functions that an import alone does not run).
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT

#: package -> (top-level modules it must not import, sub-packages exempt from the check)
RULES: dict[str, tuple[frozenset[str], tuple[str, ...]]] = {
    "leir": (frozenset({"tvm", "tvm_ffi", "django", "torch", "verifier", "tuner", "steptp_web",
                        "steptp_cli"}), ("leir/frontend",)),
    "verifier": (frozenset({"django", "steptp_web", "tuner"}), ()),
    "tuner": (frozenset({"django", "steptp_web"}), ()),
}
#: ``leir.frontend`` traces PyTorch modules, so torch is its business, but never TVM or Django.
FRONTEND_FORBIDDEN = frozenset({"tvm", "tvm_ffi", "django", "verifier", "tuner", "steptp_web"})


def _modules(package: str, exempt: tuple[str, ...]) -> list[str]:
    out = []
    for path in sorted((REPO_ROOT / package).rglob("*.py")):
        rel = path.relative_to(REPO_ROOT)
        if any(rel.as_posix().startswith(prefix + "/") for prefix in exempt):
            continue
        parts = list(rel.with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out.append(".".join(parts))
    return out


def _imported_tops(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    tops: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            tops.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            tops.add(node.module.split(".")[0])
    return tops


def _loaded_after_import(modules: list[str]) -> set[str]:
    code = ("import importlib, json, sys\n"
            f"for name in {modules!r}:\n"
            "    importlib.import_module(name)\n"
            "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True,
                          timeout=300, env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO_ROOT)})
    assert proc.returncode == 0, proc.stderr
    return set(json.loads(proc.stdout.strip().splitlines()[-1]))


@pytest.mark.parametrize("package", sorted(RULES))
def test_importing_a_package_loads_nothing_it_must_not(package):
    forbidden, exempt = RULES[package]
    modules = _modules(package, exempt)
    assert modules, f"{package} has no modules"
    loaded = _loaded_after_import(modules)
    assert not loaded & forbidden, f"importing {package} loads {sorted(loaded & forbidden)}"


def test_the_frontend_loads_torch_but_not_tvm_or_django():
    loaded = _loaded_after_import(_modules("leir/frontend", ()))
    assert "torch" in loaded  # sanity: the check sees what an import pulls in
    assert not loaded & FRONTEND_FORBIDDEN, sorted(loaded & FRONTEND_FORBIDDEN)


@pytest.mark.parametrize("package", sorted(RULES))
def test_no_source_file_imports_what_its_package_must_not(package):
    forbidden, exempt = RULES[package]
    offenders = []
    for path in sorted((REPO_ROOT / package).rglob("*.py")):
        rel = path.relative_to(REPO_ROOT).as_posix()
        if any(rel.startswith(prefix + "/") for prefix in exempt):
            bad = _imported_tops(path) & FRONTEND_FORBIDDEN
        else:
            bad = _imported_tops(path) & forbidden
        offenders.extend(f"{rel} imports {name}" for name in sorted(bad))
    assert not offenders, "\n".join(offenders)


def test_the_static_scan_sees_imports_inside_functions(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text("def f():\n    import tvm.s_tir\n    from django.db import models\n")
    assert _imported_tops(sample) == {"tvm", "django"}
