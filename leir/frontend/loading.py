"""Loading a KernelBench-style source file: ``Model``, ``get_inputs()``, ``get_init_inputs()``, constants.

``--set NAME=VALUE`` must shrink a paper-sized problem even when the constant is used at class-definition
time or inside other constants, so the override is applied to the *source*: the module-level assignment
``NAME = ...`` is rewritten to the new literal before the file runs. Everything random is seeded, so the
same file, settings and dtype always give the same model and inputs.
"""

from __future__ import annotations

import ast
import hashlib
import random
import sys
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from .errors import FrontendError

DTYPES = {"f32": torch.float32, "f64": torch.float64, "f16": torch.float16}


class SourceError(FrontendError):
    """The file does not follow the convention (no ``Model``, bad ``--set``, fails to run)."""


def parse_set(text: str) -> tuple[str, Any]:
    """``NAME=VALUE`` → (name, Python literal or string)."""
    if "=" not in text:
        raise SourceError(f"--set expects NAME=VALUE, got {text!r}")
    name, raw = text.split("=", 1)
    name, raw = name.strip(), raw.strip()
    if not name.isidentifier():
        raise SourceError(f"--set: {name!r} is not a Python identifier")
    try:
        value = ast.literal_eval(raw)
    except (ValueError, SyntaxError):
        value = raw
    return name, value


def apply_sets(source: str, sets: dict[str, Any], filename: str) -> ast.Module:
    """The parsed module with each ``NAME = ...`` top-level assignment replaced by ``NAME = <value>``."""
    try:
        tree = ast.parse(source, filename=filename)
    except SyntaxError as exc:
        raise SourceError(f"{filename}: not valid Python: {exc}") from exc
    found: set[str] = set()
    for node in tree.body:
        target = None
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            target = node.targets[0].id
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            target = node.target.id
        if target in sets:
            new = ast.copy_location(ast.Constant(sets[target]), node.value)
            node.value = new
            found.add(target)
    missing = sorted(set(sets) - found)
    if missing:
        raise SourceError(f"--set: {', '.join(missing)} is not a module-level constant of {filename}")
    return ast.fix_missing_locations(tree)


def seed_everything(seed: int = 0) -> None:
    torch.manual_seed(seed)
    random.seed(seed)
    np.random.seed(seed)


@dataclass
class LoadedSource:
    """A ready model and its inputs, in the requested dtype."""

    path: Path
    source: str
    module: types.ModuleType
    model: torch.nn.Module
    inputs: list[Any]
    init_inputs: list[Any] = field(default_factory=list)
    dtype: str = "f32"


def cast_value(value: Any, dtype: torch.dtype) -> Any:
    if isinstance(value, torch.Tensor) and value.is_floating_point():
        return value.to(dtype)
    return value


def load_source(path: str | Path, sets: dict[str, Any] | None = None, dtype: str = "f32",
                source: str | None = None) -> LoadedSource:
    """Run the file (with ``sets`` applied), build ``Model(*get_init_inputs())`` and ``get_inputs()``."""
    path = Path(path)
    if dtype not in DTYPES:
        raise SourceError(f"unknown dtype {dtype!r}; choose from {', '.join(DTYPES)}")
    if source is None:
        try:
            source = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise SourceError(f"cannot read {path}: {exc}") from exc
    tree = apply_sets(source, dict(sets or {}), str(path))
    digest = hashlib.sha256((str(path.resolve()) + repr(sorted((sets or {}).items()))).encode()).hexdigest()
    module = types.ModuleType(f"steptp_frontend_src_{digest[:16]}")
    module.__file__ = str(path)
    sys.modules[module.__name__] = module
    try:
        exec(compile(tree, str(path), "exec"), module.__dict__)  # noqa: S102 - running the user's model is the job
    except Exception as exc:
        raise SourceError(f"{path}: running the file failed: {type(exc).__name__}: {exc}") from exc
    for required in ("Model", "get_inputs"):
        if not hasattr(module, required):
            raise SourceError(f"{path}: no {required} (expected the KernelBench convention)")
    torch_dtype = DTYPES[dtype]
    seed_everything(0)
    init_inputs = list(module.get_init_inputs()) if hasattr(module, "get_init_inputs") else []
    try:
        model = module.Model(*init_inputs)
    except Exception as exc:
        raise SourceError(f"{path}: Model(*get_init_inputs()) failed: {type(exc).__name__}: {exc}") from exc
    model = model.to(torch_dtype)
    inputs = [cast_value(v, torch_dtype) for v in module.get_inputs()]
    return LoadedSource(path, source, module, model, inputs, init_inputs, dtype)
