"""Tracing a module to an fx graph and recording every node's concrete value on real inputs.

Plain ``torch.fx.symbolic_trace`` first (it keeps ``nn`` modules as leaves and ``F.*`` calls as such, the
level the emitters work at); when the forward branches on shapes, the meta tracer (which knows every
tensor's shape while tracing) takes over, and when that fails too (loops over sizes read from tensors,
shape assertions), ``torch.export``'s dynamo front end with every shape fixed. The concrete run gives
every node's shape and dtype (what ShapeProp would record) and the value of every non-tensor node
(``x.size(0)``, shape arithmetic), so the emitters only ever see concrete sizes.
"""

from __future__ import annotations

import contextlib
import inspect
import operator
import os
import re
import sysconfig
import traceback
import warnings
from collections.abc import Iterator
from typing import Any

import torch
from torch import fx
from torch.overrides import TorchFunctionMode

from .errors import FrontendError, UnsupportedOperatorError


class TraceFailure(FrontendError):
    """Neither tracer could turn the module into a graph."""


class DataDependentBranch(TraceFailure):
    """The forward branches or loops in Python on tensor *values* (``if x.sum() > 0:``,
    ``for i in idx.tolist():``): no fixed program follows every input, so the frontend refuses, naming the
    line. The static forms — ``torch.where``, masks, index tensors of a fixed capacity — translate."""

    def __init__(self, message: str, location: str | None) -> None:
        super().__init__(message)
        self.location = location


#: Functions that draw fresh random values on every call: no fixed program can reproduce them.
RANDOM_FUNCTIONS = frozenset({
    torch.rand, torch.randn, torch.randint, torch.randperm, torch.normal, torch.bernoulli, torch.multinomial,
    torch.rand_like, torch.randn_like, torch.randint_like, torch.poisson,
    torch.Tensor.normal_, torch.Tensor.uniform_, torch.Tensor.bernoulli_, torch.Tensor.random_,
    torch.Tensor.exponential_, torch.Tensor.geometric_, torch.Tensor.log_normal_, torch.Tensor.cauchy_,
})


class _TraceGuard(TorchFunctionMode):
    """Notes, while tracing, the first random call and the first in-place method on a real tensor.

    A call whose arguments hold no proxy (``torch.randn(4)``, ``self.count.add_(1)``) never becomes a graph
    node: fx evaluates it once, so a random draw would be frozen into the program and an in-place state
    update lost. ``trace`` refuses both, naming the line noted here.
    """

    def __init__(self) -> None:
        super().__init__()
        self.first: tuple[str, str | None] | None = None
        self.first_inplace: str | None = None

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if self.first is None and func in RANDOM_FUNCTIONS:
            self.first = (getattr(func, "__name__", str(func)), _user_frame())
        name = getattr(func, "__name__", "")
        if (self.first_inplace is None and name.endswith("_") and not name.endswith("__") and args
                and isinstance(args[0], torch.Tensor)):
            self.first_inplace = _user_frame()
        return func(*args, **(kwargs or {}))


def _user_frame() -> str | None:
    """``file:line`` of the innermost caller outside torch and this frontend."""
    for frame in reversed(traceback.extract_stack()):
        if not _is_library(frame.filename):
            return f"{frame.filename}:{frame.lineno}"
    return None


def _refuse_random(guard: _TraceGuard) -> None:
    if guard.first is not None:
        name, location = guard.first
        raise UnsupportedOperatorError(
            name, location=location,
            detail="random values inside forward: every call draws new ones, so no program can match it; "
                   "pass them in from get_inputs() or make them a buffer in __init__")


def _positional_params(model: torch.nn.Module) -> list[inspect.Parameter]:
    """The forward parameters ``get_inputs()`` fills by position."""
    return [p for p in inspect.signature(model.forward).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def _placeholder_names(model: torch.nn.Module) -> list[str]:
    return [p.name for p in _positional_params(model)]


def _unsupplied_defaults(model: torch.nn.Module, n_inputs: int) -> dict[str, Any]:
    """Defaults of the forward parameters that ``get_inputs()`` does not supply (``h0=None``, ``dim=1``).

    They are fixed while tracing, as the eager call fixes them; traced as placeholders instead, a test such
    as ``if h0 is None`` would see a proxy and take the wrong branch for the actual call.
    """
    return {p.name: p.default for p in _positional_params(model)[n_inputs:]
            if p.default is not inspect.Parameter.empty}


class _Root(torch.nn.Module):
    """Holds a model that is itself a library leaf module (``nn.Conv2d`` given directly), so that it is
    translated as one ``call_module`` node instead of traced through its internals."""

    def __init__(self, inner: torch.nn.Module) -> None:
        super().__init__()
        self.inner = inner

    def forward(self, *args):  # replaced per arity below
        raise NotImplementedError


def _wrap_leaf(model: torch.nn.Module, n_inputs: int) -> torch.nn.Module:
    if not fx.Tracer().is_leaf_module(model, ""):
        return model
    names = [f"x{i}" for i in range(n_inputs)]
    namespace: dict[str, Any] = {}
    exec(f"def forward(self, {', '.join(names)}):\n    return self.inner({', '.join(names)})\n",
         namespace)
    cls = type("_Root", (_Root,), {"forward": namespace["forward"]})
    return cls(model)


class _KeptState:
    """What ``_state_kept`` saw: the state tensors the traced forward changed in place."""

    def __init__(self) -> None:
        self.changed: list[str] = []


@contextlib.contextmanager
def _state_kept(model: torch.nn.Module) -> Iterator[_KeptState]:
    """Every submodule's attributes, parameters and buffers as they were before tracing.

    A forward that keeps state (``self.hidden = torch.tanh(...)``) leaves a tracing proxy in the module;
    the graph must be built from, and later run against, the module's real initial state. An in-place
    update whose operands hold no proxy (``self.count.add_(1)``) runs once, for real, while fx traces and
    is recorded nowhere; such changes are undone and reported in ``changed``.
    """
    saved = [(module, dict(module.__dict__),
              {key: dict(module.__dict__[key]) for key in ("_parameters", "_buffers", "_modules")})
             for module in model.modules()]
    values = [(name, tensor, tensor.detach().clone()) for name, tensor in _named_state(model)]
    kept = _KeptState()
    try:
        yield kept
    finally:
        for module, attributes, registries in saved:
            _restore(module.__dict__, attributes)
            for key, entries in registries.items():
                _restore(module.__dict__[key], entries)
        kept.changed = [name for name, tensor, before in values if not torch.equal(tensor, before)]
        with torch.no_grad():
            for _name, tensor, before in values:
                tensor.copy_(before)


def _refuse_state_updates(kept: _KeptState, guard: _TraceGuard) -> None:
    if kept.changed:
        raise UnsupportedOperatorError(
            "in-place update of module state", location=guard.first_inplace,
            detail=f"forward changes {', '.join(kept.changed)} in place from no input, which tracing "
                   "cannot record; compute the new value out of place (x = x + 1) or from an input")


def _named_state(model: torch.nn.Module) -> list[tuple[str, torch.Tensor]]:
    """Parameters, buffers and plain tensor attributes of every submodule, by dotted name, once each."""
    found: dict[int, tuple[str, torch.Tensor]] = {}
    for prefix, module in model.named_modules():
        entries = [*module._parameters.items(), *module._buffers.items(), *vars(module).items()]
        for key, value in entries:
            if isinstance(value, torch.Tensor) and value.device.type != "meta":
                found.setdefault(id(value), (f"{prefix}.{key}" if prefix else key, value))
    return list(found.values())


def _restore(current: dict[str, Any], saved: dict[str, Any]) -> None:
    """Old entries get their old values back; new ones stay (the tracer's own ``_tensor_constant``
    attributes) unless they hold a proxy the forward stored."""
    for key in list(current):
        if key not in saved and isinstance(current[key], fx.Proxy):
            del current[key]
    current.update(saved)


def _proxy_setitem(self: fx.Proxy, key: Any, value: Any) -> None:
    self.tracer.create_proxy("call_function", operator.setitem, (self, key, value), {})


@contextlib.contextmanager
def _item_assignment() -> Iterator[None]:
    """``x[:, 0] = y`` recorded as an ``operator.setitem`` node while tracing.

    fx proxies do not support item assignment (``TypeError``); the translator treats the node as the
    in-place write it is, and running the graph (``operator.setitem`` on real tensors) does the write.
    """
    had = "__setitem__" in vars(fx.Proxy)
    saved = vars(fx.Proxy).get("__setitem__")
    fx.Proxy.__setitem__ = _proxy_setitem
    try:
        yield
    finally:
        if had:
            fx.Proxy.__setitem__ = saved
        else:
            del fx.Proxy.__setitem__


def trace(model: torch.nn.Module, inputs: list[Any]) -> fx.GraphModule:
    model = _wrap_leaf(model, len(inputs))
    defaults = _unsupplied_defaults(model, len(inputs))
    try:
        tracer = fx.Tracer()
        tracer.record_stack_traces = True
        with _state_kept(model) as kept, _TraceGuard() as guard, _item_assignment():
            graph = tracer.trace(model, concrete_args=defaults or None)
        _refuse_random(guard)
        _refuse_state_updates(kept, guard)
        return fx.GraphModule(tracer.root, graph)
    except UnsupportedOperatorError:
        raise
    except Exception as first:
        try:
            from torch.fx.experimental.meta_tracer import MetaTracer

            names = _placeholder_names(model)
            meta_args = {n: v.to("meta") for n, v in zip(names, inputs, strict=False)
                         if isinstance(v, torch.Tensor)}
            concrete = {n: v for n, v in zip(names, inputs, strict=False) if not isinstance(v, torch.Tensor)}
            tracer = MetaTracer()
            tracer.record_stack_traces = True
            with warnings.catch_warnings():
                # The meta tracer warns for every node whose metadata it cannot compute (parameters live
                # on the CPU, not on ``meta``); the concrete run afterwards records every shape anyway.
                warnings.filterwarnings("ignore", message="Could not compute metadata", category=UserWarning)
                with _state_kept(model) as kept, _TraceGuard() as guard, _item_assignment():
                    graph = tracer.trace(model, meta_args=meta_args,
                                         concrete_args={**defaults, **concrete} or None)
            _refuse_random(guard)
            _refuse_state_updates(kept, guard)
            return fx.GraphModule(tracer.root, graph)
        except UnsupportedOperatorError:
            raise
        except Exception as second:
            try:
                return export_trace(model, inputs)
            except UnsupportedOperatorError:
                raise
            except Exception as third:
                tried = (f"tried torch.fx.symbolic_trace: {_reason(first)}; "
                         f"the meta tracer: {_reason(second)}; "
                         f"torch.export (dynamo, fixed shapes): {_reason(third)}")
                site = _value_branch_site(second)
                if site is not None:
                    location, line = site
                    raise DataDependentBranch(
                        f"{location}: data-dependent Python branch `{line}` "
                        f"in {type(model).__name__}.forward: "
                        "control flow on tensor values has no static program; express it with "
                        "torch.where / masks, or index tensors of a fixed capacity (" + tried + ")",
                        location) from third
                raise TraceFailure(f"cannot trace {type(model).__name__}; {tried}") from third


#: What fx says when a proxy meets Python control flow: ``bool(proxy)`` and ``iter(proxy)``.
_CONTROL_FLOW = ("cannot be used as inputs to control flow", "Proxy object cannot be iterated")


def _value_branch_site(exc: BaseException) -> tuple[str, str] | None:
    """``(file:line, source line)`` where the meta tracer — which knows every shape, so a branch on a shape
    never stops it — hit Python control flow on a traced value; None for any other failure."""
    if not isinstance(exc, fx.proxy.TraceError) or not any(text in str(exc) for text in _CONTROL_FLOW):
        return None
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if not _is_library(frame.filename):
            return f"{frame.filename}:{frame.lineno}", (frame.line or "").strip()
    return None


def _reason(exc: BaseException) -> str:
    """One line saying why a tracer failed (dynamo's messages run to pages of log pointers)."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"[:400]


def export_trace(model: torch.nn.Module, inputs: list[Any]) -> fx.GraphModule:
    """The forward as ``torch.export``'s front end (dynamo) sees it on these inputs, every shape fixed.

    Dynamo runs the Python of ``forward`` itself, so loops over sizes computed from tensors
    (``for i in range(x.size(1) // w)``) unroll and shape assertions (``assert L == H * W``) are checked
    rather than traced; the graph stays at the level of ``torch``/``F`` calls (``aten_graph=False``), which
    the registry knows, with the module's own parameters as attributes.
    """
    import torch._dynamo as dynamo

    dynamo.reset()
    with warnings.catch_warnings(), _state_kept(model):
        warnings.simplefilter("ignore")
        gm, _guards = dynamo.export(model, aten_graph=False, assume_static_by_default=True)(*inputs)
    return gm


class _Recorder(fx.Interpreter):
    """Runs the graph, keeping for each node only what translation needs.

    Tensor results are kept as *meta* tensors (shape and dtype, no storage), so translating a
    paper-sized model does not hold every activation in memory; real values are snapshotted only for
    parameters/attributes and for tensors created from no tensor input (they become constants).
    """

    def __init__(self, gm: fx.GraphModule) -> None:
        super().__init__(gm)
        self.values: dict[fx.Node, Any] = {}

    def run_node(self, n: fx.Node) -> Any:
        result = super().run_node(n)
        from_tensors = any(_holds_tensor(self.values.get(i)) for i in n.all_input_nodes)
        keep_values = n.op == "get_attr" or (n.op != "placeholder" and not from_tensors)
        self.values[n] = _snapshot(result, keep_values)
        return result


def _holds_tensor(value: Any) -> bool:
    if isinstance(value, torch.Tensor):
        return True
    if isinstance(value, list | tuple):
        return any(_holds_tensor(v) for v in value)
    return False


def _snapshot(value: Any, keep_values: bool) -> Any:
    """A copy later in-place operators cannot change: a clone, or a storage-less meta tensor."""
    if isinstance(value, torch.Tensor):
        if keep_values:
            return value.detach().clone()
        return torch.empty(value.shape, dtype=value.dtype, device="meta")
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return tuple(_snapshot(v, keep_values) for v in value)
    if isinstance(value, list):
        return [_snapshot(v, keep_values) for v in value]
    if hasattr(value, "_fields"):  # torch.return_types namedtuples
        return type(value)(tuple(_snapshot(v, keep_values) for v in value))
    return value


def run_concrete(gm: fx.GraphModule, inputs: list[Any]) -> dict[fx.Node, Any]:
    """Every node's value on (copies of) the real inputs."""
    recorder = _Recorder(gm)
    copies = [v.clone() if isinstance(v, torch.Tensor) else v for v in inputs]
    state = [(t, t.detach().clone()) for _name, t in _named_state(gm)]
    try:
        with torch.no_grad():
            recorder.run(*copies)
    except Exception as exc:
        raise FrontendError(
            f"running the traced model on its inputs failed: {type(exc).__name__}: {exc}") from exc
    finally:
        with torch.no_grad():  # in-place writes to module state (``self.count.add_(1)``) are undone
            for tensor, before in state:
                tensor.copy_(before)
    return recorder.values




_STDLIB = sysconfig.get_paths()["stdlib"]
_FRAME = re.compile(r'File "([^"]+)", line (\d+)')


def node_location(node: fx.Node, prefer: str | None = None) -> str | None:
    """``file:line`` of the user's source that created ``node`` (its own file's frame when known)."""
    trace_text = node.meta.get("stack_trace") if node is not None else None
    if not trace_text:
        return None
    frames = _FRAME.findall(trace_text)
    if not frames:
        return None
    if prefer:
        mine = [f for f in frames if f[0] == prefer]
        if mine:
            return f"{mine[-1][0]}:{mine[-1][1]}"
    user = [f for f in frames if not _is_library(f[0])]
    path, line = (user or frames)[-1]
    return f"{path}:{line}"


def _is_library(path: str) -> bool:
    """Frames inside torch itself or this frontend are never the user's line."""
    return ("/torch/" in path or path.startswith(_FRONTEND_DIR) or path.startswith("<")
            or path.startswith(_STDLIB))


#: This package's own folder (not any folder named ``frontend``: the tests live in ``tests/frontend/``).
_FRONTEND_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "")
