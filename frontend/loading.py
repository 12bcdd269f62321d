"""Loading a KernelBench-style source file: ``Model``, ``get_inputs()``, ``get_init_inputs()``, constants.

``--set NAME=VALUE`` must shrink a paper-sized problem even when the constant is used at class-definition
time or inside other constants, so the override is applied to the *source*: the module-level assignment
``NAME = ...`` is rewritten to the new literal before the file runs. Everything random is seeded, so the
same file, settings and dtype always give the same model and inputs.
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import random
import sys
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch.overrides import TorchFunctionMode

from .errors import FrontendError

DTYPES = {"f32": torch.float32, "f64": torch.float64, "f16": torch.float16, "bf16": torch.bfloat16}
#: Storage-only float types: a model's fp8 weights stay fp8 whatever dtype the model is loaded in.
KEPT_DTYPES = (torch.float8_e4m3fn, torch.float8_e5m2)


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


def bound_names(target: ast.expr) -> list[str]:
    """Names a target binds: ``a``, ``a, b``, ``(a, [b, c])``; attributes and subscripts bind none."""
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, ast.Tuple | ast.List):
        return [name for elt in target.elts for name in bound_names(elt)]
    if isinstance(target, ast.Starred):
        return bound_names(target.value)
    return []


def literal_node(value: Any) -> ast.expr:
    """The syntax node of a ``--set`` value: a constant, or a list/dict/set/tuple display of them.

    ``ast.Constant`` only holds scalars (and tuples of them); public files take layer sizes as lists
    (``--set layer_sizes=[64,32]``), which are rebuilt from their source text.
    """
    if value is None or isinstance(value, bool | int | float | complex | str | bytes):
        return ast.Constant(value)
    try:
        node = ast.parse(repr(value), mode="eval").body
        if ast.literal_eval(node) == value:
            return node
    except (SyntaxError, ValueError):
        pass
    raise SourceError(f"--set: {value!r} is not a Python literal")


def override(node: ast.stmt, sets: dict[str, Any]) -> tuple[list[ast.stmt], set[str]]:
    """``node`` with the ``--set`` names it binds overridden, plus those names.

    ``NAME = ...`` gets the new literal in place. Chained (``height = width = 128``) and unpacking
    (``depth, height, width = 16, 32, 32``) assignments, common in public KernelBench files, run as
    written and are followed by ``NAME = <value>`` for each overridden name, so the other names keep
    their values and a later use of the name sees the override.
    """
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, ast.AnnAssign) and node.value is not None:
        targets = [node.target]
    else:
        return [node], set()
    names = [name for target in targets for name in bound_names(target) if name in sets]
    if not names:
        return [node], set()
    if len(targets) == 1 and isinstance(targets[0], ast.Name):
        node.value = ast.copy_location(literal_node(sets[names[0]]), node.value)
        return [node], set(names)
    after = [ast.copy_location(ast.Assign([ast.Name(name, ast.Store())], literal_node(sets[name])), node)
             for name in dict.fromkeys(names)]
    return [node, *after], set(names)


def apply_sets(source: str, sets: dict[str, Any], filename: str) -> ast.Module:
    """The parsed module with every top-level binding of a ``--set`` name overridden (see ``override``)."""
    try:
        tree = ast.parse(source, filename=filename)
    except SyntaxError as exc:
        raise SourceError(f"{filename}: not valid Python: {exc}") from exc
    found: set[str] = set()
    body: list[ast.stmt] = []
    for node in tree.body:
        stmts, names = override(node, sets)
        body.extend(stmts)
        found |= names
    tree.body = body
    missing = sorted(set(sets) - found)
    if missing:
        raise SourceError(f"--set: {', '.join(missing)} is not a module-level constant of {filename}")
    return ast.fix_missing_locations(tree)


def parse_input_shape(text: str) -> tuple[int, tuple[int, ...]]:
    """``INDEX=SHAPE`` (``0=2,3,32,32`` or ``0=(2, 3, 32, 32)``) → (index, shape)."""
    if "=" not in text:
        raise SourceError(f"--input-shape expects INDEX=SHAPE, got {text!r}")
    index, raw = (part.strip() for part in text.split("=", 1))
    try:
        position = int(index)
        value = ast.literal_eval(raw if raw.startswith(("(", "[")) else f"({raw},)")
        shape = tuple(int(s) for s in (value if isinstance(value, tuple | list) else (value,)))
    except (ValueError, SyntaxError, TypeError):
        raise SourceError(f"--input-shape: {text!r} is not INDEX=SHAPE (like 0=2,3,32,32)") from None
    if position < 0 or any(s < 0 for s in shape):
        raise SourceError(f"--input-shape: {text!r}: the index and the sizes must not be negative")
    return position, shape


#: Names whose attribute calls create tensors (``torch.rand``, ``np.ones``); a call on any other name is a
#: method of a variable.
_FACTORY_MODULES = frozenset({"torch", "np", "numpy"})
#: The calls that create a tensor of a given size; any other ``torch.f(x, ...)`` transforms its first
#: argument.
_FACTORIES = frozenset({"rand", "randn", "randint", "ones", "zeros", "full", "empty", "tensor", "as_tensor",
                        "arange", "linspace", "logspace", "eye", "normal", "randperm", "rand_like",
                        "randn_like", "randint_like", "ones_like", "zeros_like", "full_like", "empty_like"})


def _factory_call(node: ast.expr) -> ast.Call | None:
    """The creating call of an input expression: ``torch.randn(...)`` also inside ``.cuda()``/``.to(..)``
    /``.float()`` chains and inside the arithmetic and comparisons public files wrap it in —
    ``torch.rand(n, 1) > 0.5``, ``torch.rand(n, m) * scale``, ``(torch.rand(n, m) * s).softmax(dim=-1)``,
    ``torch.randint(0, 2, (n,)).float() * 2 - 1`` (the first operand that holds a call)."""
    while True:
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute) and not (isinstance(func.value, ast.Name | ast.Attribute)):
                node = func.value  # x.cuda(), x.to(device), (x * s).softmax(-1): the size is inside
                continue
            if (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
                    and func.value.id not in _FACTORY_MODULES):
                return None  # sign.reshape(n, 1): a method of a variable, its sizes are not the input's
            if (isinstance(func, ast.Attribute) and func.attr not in _FACTORIES and node.args
                    and _holds_call(node.args[0])):
                node = node.args[0]  # torch.abs(torch.rand(n, m)), torch.triu(...): the size is inside
                continue
            return node
        if isinstance(node, ast.BinOp):
            node = node.left if _holds_call(node.left) else node.right
        elif isinstance(node, ast.Compare):
            node = node.left if _holds_call(node.left) else node.comparators[0]
        elif isinstance(node, ast.UnaryOp):
            node = node.operand
        else:
            return None


def _holds_call(node: ast.expr) -> bool:
    return any(isinstance(n, ast.Call) for n in ast.walk(node))


def _resize_call(call: ast.Call, shape: tuple[int, ...]) -> None:
    """The size arguments of a factory call replaced by ``shape`` (a tuple/list argument, a ``size=``
    keyword, or else the positional sizes: ``torch.randint(0, 10, (n,))``, ``torch.rand(n, 3, 224, 224)``)."""
    new = ast.Tuple([ast.Constant(s) for s in shape], ast.Load())
    for kw in call.keywords:
        if kw.arg == "size":
            kw.value = new
            return
    for i, arg in enumerate(call.args):
        if isinstance(arg, ast.Tuple | ast.List):
            call.args[i] = new
            return
    call.args = [ast.Constant(s) for s in shape]


def apply_input_shapes(tree: ast.Module, shapes: dict[int, tuple[int, ...]], filename: str) -> None:
    """Rewrite the creating calls of the chosen ``get_inputs()`` entries to the given shapes.

    The entry is found in the returned list (``return [torch.rand(2, 3, 224, 224)]``) or, when the list
    names a variable, in that variable's assignment inside ``get_inputs``; the call keeps its kind
    (``rand``/``randn``/``randint``/``ones``...), so the values keep their distribution.
    """
    if not shapes:
        return
    func = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "get_inputs"), None)
    if func is None:
        raise SourceError(f"--input-shape: {filename} has no get_inputs()")
    returned = next((n.value for n in ast.walk(func) if isinstance(n, ast.Return)), None)
    if not isinstance(returned, ast.List | ast.Tuple):
        raise SourceError(f"--input-shape: get_inputs() of {filename} does not return a list display")
    assigned = {target.id: n.value for n in ast.walk(func) if isinstance(n, ast.Assign)
                for target in n.targets if isinstance(target, ast.Name)}
    for index, shape in shapes.items():
        if index >= len(returned.elts):
            raise SourceError(f"--input-shape: get_inputs() of {filename} returns {len(returned.elts)} "
                              f"inputs, there is no input {index}")
        entry = returned.elts[index]
        if isinstance(entry, ast.Name) and entry.id in assigned:
            entry = assigned[entry.id]
        call = _factory_call(entry)
        if call is None:
            raise SourceError(f"--input-shape: input {index} of get_inputs() in {filename} is not created "
                              f"by a call whose size can be rewritten ({ast.unparse(entry)})")
        _resize_call(call, shape)


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
    if isinstance(value, torch.Tensor) and value.is_floating_point() and value.dtype not in KEPT_DTYPES:
        return value.to(dtype)
    return value


def load_source(path: str | Path, sets: dict[str, Any] | None = None, dtype: str = "f32",
                source: str | None = None,
                input_shapes: dict[int, tuple[int, ...]] | None = None) -> LoadedSource:
    """Run the file (with ``sets`` and ``input_shapes`` applied), build ``Model(*get_init_inputs())`` and
    ``get_inputs()``."""
    path = Path(path)
    if dtype not in DTYPES:
        raise SourceError(f"unknown dtype {dtype!r}; choose from {', '.join(DTYPES)}")
    if source is None:
        try:
            source = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise SourceError(f"cannot read {path}: {exc}") from exc
    tree = apply_sets(source, dict(sets or {}), str(path))
    apply_input_shapes(tree, dict(input_shapes or {}), str(path))
    tree = ast.fix_missing_locations(tree)
    key = repr(sorted((sets or {}).items())) + repr(sorted((input_shapes or {}).items()))
    digest = hashlib.sha256((str(path.resolve()) + key).encode()).hexdigest()
    module = types.ModuleType(f"steptp_frontend_src_{digest[:16]}")
    module.__file__ = str(path)
    sys.modules[module.__name__] = module
    try:
        exec(compile(tree, str(path), "exec"), module.__dict__)
    except Exception as exc:
        raise SourceError(f"{path}: running the file failed: {type(exc).__name__}: {exc}") from exc
    for required in ("Model", "get_inputs"):
        if not hasattr(module, required):
            raise SourceError(f"{path}: no {required} (expected the KernelBench convention)")
    torch_dtype = DTYPES[dtype]
    seed_everything(0)
    with _cpu_placement():
        init_inputs = (_call(path, "get_init_inputs()", lambda: list(module.get_init_inputs()))
                       if hasattr(module, "get_init_inputs") else [])
        model = _call(path, "Model(*get_init_inputs())", lambda: module.Model(*init_inputs))
        raw_inputs = _call(path, "get_inputs()", lambda: list(module.get_inputs()))
    # not model.to(dtype), which would also widen fp8 weights (a quantised model's point)
    model = model._apply(lambda t: cast_value(t, torch_dtype))
    inputs = [cast_value(v, torch_dtype) for v in raw_inputs]
    return LoadedSource(path, source, module, model, inputs, init_inputs, dtype)


def _call(path: Path, what: str, make: Any) -> Any:
    """Run one of the file's entry points; whatever it raises is the file's problem, said as such."""
    try:
        return make()
    except Exception as exc:
        raise SourceError(f"{path}: {what} failed: {type(exc).__name__}: {exc}") from exc


def _is_gpu_device(device: Any) -> bool:
    if isinstance(device, torch.device):
        return device.type == "cuda"
    return isinstance(device, str) and device.split(":")[0] == "cuda"


class _OnTheCpu(TorchFunctionMode):
    """Builds a file's model and inputs on the CPU where it asks for ``cuda`` (KernelBench files often do).

    Translation needs only shapes, dtypes and parameter values, and the reference runs on the CPU, so
    ``device="cuda"``, ``.cuda()`` and ``.to("cuda")`` become CPU placements while the file's entry points
    run.
    """

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        if _is_gpu_device(kwargs.get("device")):
            kwargs["device"] = "cpu"
        if func is torch.Tensor.cuda:
            return args[0]
        if func is torch.Tensor.to:
            args = tuple("cpu" if _is_gpu_device(a) else a for a in args)
        return func(*args, **kwargs)


def _cpu_placement() -> contextlib.AbstractContextManager:
    """``cuda`` placements turned into CPU ones, on a machine without CUDA; elsewhere nothing changes."""
    return contextlib.nullcontext() if torch.cuda.is_available() else _OnTheCpu()
