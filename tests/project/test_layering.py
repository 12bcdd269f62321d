"""The import layering, stated once with no exemptions.

The packages, bottom to top: ``leir`` (the language) ← ``strategies`` (the engine) ← ``dataset`` (the
pipeline); ``frontend`` (PyTorch → LEIR) beside the engine on top of ``leir``; ``verifier`` (TVM) and
``tuner`` above them; ``curation`` and ``steptp_web`` (Django) on top; ``steptp_cli`` beside them. The
rules: the language imports none of the others; only the frontend imports torch; only the verifier imports
TVM; nothing below ``curation`` imports Django.

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

TVM = frozenset({"tvm", "tvm_ffi"})
TORCH = frozenset({"torch"})
DJANGO = frozenset({"django", "rest_framework", "drf_spectacular", "celery", "kombu"})
TOP = frozenset({"curation", "steptp_web", "steptp_cli"})

#: package -> top-level modules it must not import
RULES: dict[str, frozenset[str]] = {
    "leir": TVM | TORCH | DJANGO | TOP | {"frontend", "strategies", "dataset", "verifier", "tuner", "workloads"},
    "strategies": TVM | TORCH | DJANGO | TOP | {"frontend", "dataset", "verifier", "tuner", "workloads"},
    "dataset": TVM | TORCH | DJANGO | TOP | {"frontend", "verifier", "tuner", "workloads"},
    "frontend": TVM | DJANGO | TOP | {"strategies", "dataset", "verifier", "tuner"},
    "verifier": TORCH | DJANGO | TOP | {"tuner"},
    "tuner": TVM | TORCH | DJANGO | TOP,
    "steptp_cli": TVM | TORCH | DJANGO | {"curation", "steptp_web"},
    # the reward runs the verifier (TVM in its sandbox) but never a model: no torch of its own
    "rewards": TVM | TORCH | DJANGO | TOP | {"training", "frontend"},
    # the trainer side (transformers, torch) never reaches into the verifier or the database
    "training": TVM | DJANGO | TOP | {"verifier", "tuner", "rewards"},
}


def _modules(package: str) -> list[str]:
    out = []
    for path in sorted((REPO_ROOT / package).rglob("*.py")):
        parts = list(path.relative_to(REPO_ROOT).with_suffix("").parts)
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
        elif (isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None))
              in {"import_module", "__import__"} and node.args and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str)):
            tops.add(node.args[0].value.split(".")[0])  # importlib.import_module("pkg.mod")
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
    modules = _modules(package)
    assert modules, f"{package} has no modules"
    loaded = _loaded_after_import(modules)
    # TVM's own import loads torch (tvm_ffi's DLPack bridge): where TVM is allowed, torch comes with it,
    # and the static scan below still holds our own files to the rule.
    forbidden = RULES[package] - (TORCH if not RULES[package] & TVM else frozenset())
    assert not loaded & forbidden, f"importing {package} loads {sorted(loaded & forbidden)}"


def test_the_frontend_is_where_torch_is_loaded():
    loaded = _loaded_after_import(_modules("frontend"))
    assert "torch" in loaded  # sanity: the check sees what an import pulls in


@pytest.mark.parametrize("package", sorted(RULES))
def test_no_source_file_imports_what_its_package_must_not(package):
    offenders = []
    for path in sorted((REPO_ROOT / package).rglob("*.py")):
        bad = _imported_tops(path) & RULES[package]
        offenders.extend(f"{path.relative_to(REPO_ROOT)} imports {name}" for name in sorted(bad))
    assert not offenders, "\n".join(offenders)


def test_the_static_scan_sees_imports_inside_functions(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text("def f():\n    import tvm.s_tir\n    from django.db import models\n"
                      "    importlib.import_module('torch.nn')\n")
    assert _imported_tops(sample) == {"tvm", "django", "torch"}
