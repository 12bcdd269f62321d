"""The driver: trace → walk the graph with concrete values → emit blocks → tidy → checked ``Program``.

Every node is either a Python value (sizes, shape arithmetic: taken from the concrete run), a tensor
created from nothing (a constant or a fill), or an operator looked up in the registry. An emitter's
result is checked against the concrete run's shape and dtype, so a wrong emitter fails loudly here
rather than producing a plausible but wrong program.
"""

from __future__ import annotations

import dataclasses
import inspect
import operator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import fx

from leir.analysis import dead_blocks, reads, writes
from leir.ast import Block, Body, Loop, Pos, Program, Signature, TensorDecl, TensorRef

from . import ops  # noqa: F401 - registers every operator family
from .emit import Emitter, Tensor
from .errors import FrontendError, UnsupportedOperatorError
from .loading import load_source
from .registry import Ctx, leir_dtype, lookup, supported_summary, to_numpy
from .tracing import RANDOM_FUNCTIONS, node_location, run_concrete, trace
from .uninitialised import Coverage

#: Operators whose result depends on tensor *values* in a way a static program cannot express.
DATA_DEPENDENT = {"item", "tolist", "nonzero", "masked_select", "unique", "__bool__", "numpy"}
RANDOM_CREATORS = RANDOM_FUNCTIONS | {torch.empty, torch.empty_like}


def flatten_outputs(value: Any) -> list[Any]:
    """A forward's result as a flat list, nested tuples/lists in order (how outputs map to names)."""
    if isinstance(value, list | tuple):
        return [leaf for item in value for leaf in flatten_outputs(item)]
    return [value]


@dataclass
class Translation:
    """A translated program plus what the verifier and the dataset need around it."""

    program: Program
    #: Values of params/consts by LEIR name (what ``OUT.npz`` holds).
    values: dict[str, np.ndarray]
    input_names: tuple[str, ...]
    output_names: tuple[str, ...]
    #: Operators met, in graph order, once each (registry names: ``linear``, ``conv``, ``relu``...;
    #: the fx target's name for tensors created from nothing).
    ops_seen: tuple[str, ...]
    #: ``file:line`` of the source operation behind each top-level block (``None`` when unknown).
    source_lines: tuple[str | None, ...]
    #: LEIR param/const name → the torch tensor it was read from (lets a reference load new values).
    torch_tensors: dict[str, torch.Tensor] = field(default_factory=dict, repr=False)
    #: Forward-argument positions of the LEIR inputs (non-tensor arguments have none).
    input_positions: tuple[int, ...] = ()
    #: One line per plain write through indices that may repeat, with different values
    #: (``x[idx] = v``, ``index_put_``, ``scatter``/``index_copy`` without reduce): where they repeat,
    #: PyTorch keeps whichever of its threads wrote last, so the source's own result can change from run
    #: to run; the translation keeps the last write in row-major order.
    write_order: tuple[str, ...] = ()
    #: What the source's ``get_inputs()`` gives each input, by LEIR name (``frontend.domains``); filled
    #: by ``translate_file``, which has the source to draw from (``steptp translate`` writes it beside).
    input_domains: dict[str, dict[str, Any]] = field(default_factory=dict)


def _map_args(value: Any, env: dict[fx.Node, Any]) -> Any:
    return fx.node.map_arg(value, lambda n: env[n])


def _has_tensor(value: Any) -> bool:
    if isinstance(value, Tensor):
        return True
    if isinstance(value, list | tuple):
        return any(_has_tensor(v) for v in value)
    if isinstance(value, dict):
        return any(_has_tensor(v) for v in value.values())
    return False


def _is_real_tensor_result(value: Any) -> bool:
    if isinstance(value, torch.Tensor):
        return True
    if isinstance(value, list | tuple):
        return any(_is_real_tensor_result(v) for v in value)
    return False


def _op_name(node: fx.Node, module: Any = None) -> str:
    if node.op == "call_method":
        return str(node.target)
    if node.op == "call_module":
        return type(module).__name__
    target = node.target
    return getattr(target, "__name__", str(target))


def _inplace(node: fx.Node, module: Any) -> bool:
    if node.op == "call_method":
        name = str(node.target)
        return name.endswith("_") and not name.endswith("__")
    if node.op == "call_module":
        return bool(getattr(module, "inplace", False))
    return bool(node.kwargs.get("inplace", False))


class _Translator:
    def __init__(self, model: torch.nn.Module, inputs: list[Any], *, target_neutral: bool,
                 source_path: str | None) -> None:
        self.model = model
        self.inputs = inputs
        self.source_path = source_path
        self.em = Emitter(bind_first=not target_neutral)
        self.env: dict[fx.Node, Any] = {}
        #: Module attributes written in place (``self.hidden.copy_(h)``), by target: what later reads see.
        self.attr_writes: dict[str, Any] = {}
        self.ops_seen: list[str] = []
        self.block_sources: list[str | None] = []
        self.input_positions: list[int] = []
        #: Tensor renames that give each operator's result the first of the names it allocated.
        self.renames: dict[str, str] = {}
        #: Unwritten elements of ``empty_like``/``new_empty`` buffers (``frontend.uninitialised``).
        self.coverage = Coverage()

    def location(self, node: fx.Node) -> str | None:
        return node_location(node, self.source_path)

    def run(self) -> tuple[list[Tensor], Any]:
        gm = trace(self.model, self.inputs)
        real = run_concrete(gm, self.inputs)
        self.gm = gm
        buffers = {id(b) for b in gm.buffers()} | {id(p) for p in gm.parameters()}
        position = 0
        outputs: Any = None
        for node in gm.graph.nodes:
            start = len(self.em.blocks)
            try:
                if node.op == "placeholder":
                    value = real[node]
                    if isinstance(value, torch.Tensor):
                        self.env[node] = self.em.add_input(value.shape, leir_dtype(value.dtype))
                        self.input_positions.append(position)
                    else:
                        self.env[node] = value
                    position += 1
                elif node.op == "get_attr":
                    value = real[node]
                    if str(node.target) in self.attr_writes:
                        self.env[node] = self.attr_writes[str(node.target)]
                    elif isinstance(value, torch.Tensor):
                        attr = _fetch_attr(gm, str(node.target))
                        role = "param" if id(attr) in buffers else "const"
                        self.env[node] = self.em.add_known(
                            id(attr), to_numpy(value), leir_dtype(value.dtype), role, attr)
                    else:
                        self.env[node] = value
                elif node.op == "output":
                    outputs = _map_args(node.args[0], self.env)
                else:
                    first_name = len(self.em.names.log)
                    self.env[node] = self.call(node, real[node])
                    self._order_names(self.em.names.log[first_name:], self.env[node])
            except UnsupportedOperatorError as exc:
                if exc.location is None:
                    exc.location = self.location(node)
                    exc.args = (str(exc),)
                raise
            self.block_sources.extend([self.location(node)] * (len(self.em.blocks) - start))
        return self._outputs(outputs), gm

    def _order_names(self, allocated: list[str], result: Any) -> None:
        """Public-data naming: an operator's result takes its first name, then its parameters, then temps."""
        if len(allocated) < 2:
            return
        results = [t.name for t in _flat_tensors(result) if t.name in allocated]
        known = [k.tensor.name for k in self.em.params.values() if k.tensor.name in allocated]
        desired = list(dict.fromkeys(results + known + allocated))
        for old, new in zip(desired, allocated, strict=True):
            if old != new:
                self.renames[old] = new

    def call(self, node: fx.Node, real: Any) -> Any:
        module = gm_module = None
        if node.op == "call_module":
            module = gm_module = self.gm.get_submodule(str(node.target))
        name = _op_name(node, module)
        if node.op == "call_method" and name in DATA_DEPENDENT:
            raise UnsupportedOperatorError(name, detail="the result depends on tensor values at run time")
        args = _map_args(node.args, self.env)
        kwargs = _map_args(node.kwargs, self.env)
        if (node.op == "call_function" and node.target is operator.setitem) or (
                node.op == "call_method" and node.target == "__setitem__"):  # the latter on a real tensor
            self.coverage.check_reads("setitem", _flat_tensors((args[2:], kwargs)))
            return self.assign_item(node, args)
        if node.target is torch.empty_like or (node.op == "call_method" and node.target == "new_empty"):
            self._seen(name)
            tensor = self.em.fill(real.shape, leir_dtype(real.dtype), 0)  # 0 in LEIR; proved never read
            self.coverage.created(tensor, self.location(node))
            return tensor
        # a slice of written elements reads no unwritten one; out.copy_(src) / out.fill_(v) read none
        key = args[1] if len(args) > 1 else None
        first_unread = (name == "getitem" and bool(args) and self.coverage.sliced(args[0], key)) or (
            name in _WHOLE_WRITES and node.op == "call_method")
        self.coverage.check_reads(name, _flat_tensors((args[1:] if first_unread else args, kwargs)))
        if "out" in kwargs and kwargs["out"] is None:
            kwargs = {k: v for k, v in kwargs.items() if k != "out"}
        if not _is_real_tensor_result(real):
            if (_has_tensor(args) or _has_tensor(kwargs)) and not _metadata_query(node, args):
                raise UnsupportedOperatorError(
                    name, detail="a non-tensor result computed from tensor values (or a side effect)",
                    supported="shape queries: size, dim, numel, shape, dtype, ndim, len")
            return real  # sizes, shape arithmetic, dtypes: concrete values
        if not (_has_tensor(args) or _has_tensor(kwargs)) and node.op != "call_module":
            self._seen(name)
            return self.creation(node, real, name)
        entry = lookup(node, gm_module)
        if entry is None:
            raise UnsupportedOperatorError(name, supported=supported_summary())
        self._seen(entry.name)
        if node.op != "call_module" and "input" in kwargs:  # F.op(input=x, ...) reads like F.op(x, ...)
            kwargs = dict(kwargs)
            args = (kwargs.pop("input"), *args)
        ctx = Ctx(self.em, node, real, module)
        call_args = (ctx, module, *args) if node.op == "call_module" else (ctx, *args)
        try:
            inspect.signature(entry.fn).bind(*call_args, **kwargs)
        except TypeError as exc:
            raise UnsupportedOperatorError(entry.name, detail=f"this argument pattern ({exc})") from None
        result = entry.fn(*call_args, **kwargs)
        _check_result(name, result, real)
        if _inplace(node, module) and node.args and isinstance(node.args[0], fx.Node):
            _refuse_frozen_write(node.args[0], name)
            self.env[node.args[0]] = result
            if node.args[0].op == "get_attr":  # later reads of the attribute are new get_attr nodes
                self.attr_writes[str(node.args[0].target)] = result
        return result

    def assign_item(self, node: fx.Node, args) -> None:
        """``x[key] = value``: ``x`` is rebound to its new value, as for an in-place method."""
        from .ops.scatter import setitem

        self._seen("setitem")
        target = node.args[0]
        if not isinstance(target, fx.Node):
            raise UnsupportedOperatorError("setitem", detail="assignment into a value that is not traced")
        _refuse_aliased_write(target, node)
        _refuse_frozen_write(target, "setitem")
        result = setitem(Ctx(self.em, node, None, None), *args)
        self.coverage.assigned(args[0], args[1], result)
        self.env[target] = result
        if target.op == "get_attr":
            self.attr_writes[str(target.target)] = result
        return None

    def write_order_notes(self) -> tuple[str, ...]:
        """What ``Translation.write_order`` says, once per source operation."""
        notes = []
        for node in dict.fromkeys(self.em.order_dependent):
            where = self.location(node) or node.name
            notes.append(f"{_node_op_name(node)} at {where} writes through indices that may repeat: where "
                         "they do, PyTorch keeps whichever thread's write lands last (runs can differ); "
                         "the translation keeps the last in row-major order")
        return tuple(notes)

    def _seen(self, name: str) -> None:
        if name not in self.ops_seen:
            self.ops_seen.append(name)

    def creation(self, node: fx.Node, real: Any, name: str) -> Any:
        """A tensor made from no tensor: a fill when uniform, else a constant with its values."""
        if node.target in RANDOM_CREATORS or name in {"rand", "randn", "randint", "normal_", "uniform_"}:
            if node.target is torch.empty:  # fx freezes a factory call that reads no input at trace time
                raise UnsupportedOperatorError(
                    name, detail="uninitialised values made from no input (torch.fx freezes them)",
                    supported="torch.empty_like(x) or x.new_empty(shape), written in full before any read")
            raise UnsupportedOperatorError(name, detail="random or uninitialised values inside forward")
        if not isinstance(real, torch.Tensor):
            raise UnsupportedOperatorError(name, detail="creates several tensors from no input")
        dtype = leir_dtype(real.dtype)
        flat = real.reshape(-1)
        if flat.numel() > 0 and bool((flat == flat[0]).all()):
            first = flat[0].item()
            return self.em.fill(real.shape, dtype, first)
        tensor = self.em.add_known(("const", node.name), to_numpy(real), dtype, "const")
        return tensor

    def _outputs(self, outputs: Any) -> list[Tensor]:
        flat = flatten_outputs(outputs)
        self.coverage.check_reads("output", flat)
        result: list[Tensor] = []
        for value in flat:
            if not isinstance(value, Tensor):
                raise UnsupportedOperatorError(
                    "output", detail=f"forward returns a non-tensor value {value!r}")
            if value.role != "intermediate" or value in result:
                value = self.em.elementwise(value.shape, value.dtype, [value], lambda a: a)
                self.block_sources.append(None)
            result.append(value)
        return result


#: In-place methods that write every element of their tensor (reading none of it).
_WHOLE_WRITES = {"copy_", "fill_", "zero_"}

#: Operators whose result may share storage with their first argument (a write through it changes both).
_VIEWS = {"view", "view_as", "reshape", "transpose", "permute", "t", "unsqueeze", "squeeze", "flatten",
          "narrow", "select", "expand", "expand_as", "diagonal", "unfold", "movedim", "swapaxes", "swapdims",
          "unbind", "split", "chunk", "getitem", "contiguous", "as_strided", "unflatten", "T", "mT", "detach"}


def _refuse_aliased_write(target: fx.Node, write: fx.Node) -> None:
    """A write into a view changes the tensor it views too; refuse it when that tensor is read later."""
    order = {n: i for i, n in enumerate(write.graph.nodes)}

    def read_later(node: fx.Node) -> bool:
        return any(order[user] > order[write] for user in node.users)

    def refuse(name: str, what: str) -> None:
        raise UnsupportedOperatorError(
            "setitem", detail=f"assignment {what} ({name}) read afterwards; the write would change both, "
                              "which LEIR's separate tensors cannot share",
            supported="assignment into a tensor that is not a view and has no views in use "
                      "(clone it first)")

    name = _node_op_name(target)
    if name in _VIEWS and target.args and isinstance(target.args[0], fx.Node) and read_later(target.args[0]):
        refuse(name, "through a view whose base is")
    for user in target.users:
        earlier_view = order[user] < order[write] and _node_op_name(user) in _VIEWS
        if user is not write and earlier_view and read_later(user):
            refuse(_node_op_name(user), "into a tensor with an earlier view")


def _refuse_frozen_write(target: fx.Node, name: str) -> None:
    """fx runs a factory call that reads no traced value (``torch.zeros(4, 5)``) while tracing and keeps
    each later *use* of the result as its own frozen constant, so an in-place write into it never
    reaches the reads: refuse instead of translating the unwritten value."""
    if target.op == "get_attr" and str(target.target).startswith("_tensor_constant"):
        raise UnsupportedOperatorError(
            name, detail="in-place write into a tensor created in forward from no input (torch.fx freezes "
                         "it at trace time, so later reads would not see the write)",
            supported="create it from an input: x.new_zeros(...), torch.zeros_like(x), "
                      "torch.zeros(..., dtype=x.dtype)")


def _node_op_name(node: fx.Node) -> str:
    if node.op == "call_method":
        return str(node.target)
    if node.op == "call_function":
        return getattr(node.target, "__name__", "")
    return ""


_METADATA_METHODS = {"size", "dim", "numel", "nelement", "ndimension", "type", "get_device", "is_contiguous",
                     "element_size", "is_floating_point"}
_METADATA_ATTRS = {"shape", "dtype", "ndim", "device", "is_cuda", "requires_grad", "layout"}


def _metadata_query(node: fx.Node, args) -> bool:
    """Whether a non-tensor result only describes tensors' metadata (safe to take from the concrete run)."""
    if node.op == "call_method":
        return str(node.target) in _METADATA_METHODS
    if node.op == "call_function":
        if node.target is getattr:
            return len(args) > 1 and args[1] in _METADATA_ATTRS
        if node.target in (len, torch.numel, torch.is_tensor, torch.is_floating_point, isinstance):
            return True
        if node.target is operator.getitem:
            return not isinstance(args[0], Tensor)
        # arithmetic on sizes: every tensor argument is only there as a value we already know
        return False
    return False


def _flat_tensors(value: Any) -> list[Tensor]:
    if isinstance(value, Tensor):
        return [value]
    if isinstance(value, list | tuple):
        return [t for v in value for t in _flat_tensors(v)]
    return []


def rename_tensors(node: Any, mapping: dict[str, str]) -> Any:
    """``node`` (any AST node or tuple of them) with tensor names replaced per ``mapping``."""
    if isinstance(node, tuple):
        new = tuple(rename_tensors(x, mapping) for x in node)
        return node if all(a is b for a, b in zip(new, node, strict=True)) else new
    if not dataclasses.is_dataclass(node) or isinstance(node, Pos | Loop):
        return node
    changes = {}
    for f in dataclasses.fields(node):
        value = getattr(node, f.name)
        renamed = rename_tensors(value, mapping)
        if renamed is not value:
            changes[f.name] = renamed
    if isinstance(node, TensorRef) and node.name in mapping:
        changes["name"] = mapping[node.name]
    return dataclasses.replace(node, **changes) if changes else node


def _fetch_attr(gm: fx.GraphModule, target: str) -> Any:
    obj: Any = gm
    for part in target.split("."):
        obj = getattr(obj, part)
    return obj


def _check_result(name: str, result: Any, real: Any) -> None:
    """The emitted tensor(s) must have the concrete run's shape and dtype."""
    if isinstance(result, Tensor):
        if not isinstance(real, torch.Tensor):
            raise FrontendError(f"{name}: emitted a tensor where PyTorch returned {type(real).__name__}")
        if tuple(real.shape) != result.shape or leir_dtype(real.dtype) != result.dtype:
            raise FrontendError(
                f"internal error in the {name} emitter: produced {result.dtype}{list(result.shape)}, "
                f"PyTorch gives {leir_dtype(real.dtype)}{list(real.shape)}")
    elif isinstance(result, list | tuple) and isinstance(real, list | tuple):
        for r, t in zip(result, real, strict=False):
            _check_result(name, r, t)


def eliminate_dead_blocks(blocks: list[Block], sources: list, live: set[str]) -> tuple[list, list]:
    """Drop blocks that only write tensors nothing later reads (unused ``split`` pieces, sizes...).

    The rule is ``leir.analysis.dead_blocks``, the same one the dead_code_elimination strategy applies.
    """
    dead = dead_blocks(blocks, live)
    kept = [i for i in range(len(blocks)) if i not in dead]
    return [blocks[i] for i in kept], [sources[i] for i in kept]


def translate_module(model: torch.nn.Module, inputs: list[Any], *, target_neutral: bool = False,
                     source_path: str | None = None, check: bool = True,
                     keep_dead_blocks: bool = False) -> Translation:
    """Translate ``model`` called on ``inputs`` into a checked LEIR program.

    ``keep_dead_blocks`` keeps what the model computes but never uses (the index half of ``max(dim)``,
    unused ``split`` pieces): the faithful translation, a natural source for dead_code_elimination.
    """
    translator = _Translator(model, inputs, target_neutral=target_neutral, source_path=source_path)
    outputs, _ = translator.run()
    em = translator.em
    mapping = translator.renames
    if mapping:
        em.blocks = [rename_tensors(b, mapping) for b in em.blocks]
        outputs = [dataclasses.replace(t, name=mapping.get(t.name, t.name)) for t in outputs]
        for known in em.params.values():
            name = known.tensor.name
            known.tensor = dataclasses.replace(known.tensor, name=mapping.get(name, name))
    output_names = [t.name for t in outputs]
    blocks, sources = em.blocks, translator.block_sources
    if not keep_dead_blocks:
        blocks, sources = eliminate_dead_blocks(blocks, sources, set(output_names))
    used = set()
    for block in blocks:
        used |= reads(block) | writes(block)
    decls = [TensorDecl(t.name, "input", t.dtype, t.shape) for t in em.inputs]
    values: dict[str, np.ndarray] = {}
    torch_tensors: dict[str, torch.Tensor] = {}
    for known in em.params.values():
        t = known.tensor
        if t.name not in used:
            continue
        decls.append(TensorDecl(t.name, t.role, t.dtype, t.shape))
        values[t.name] = known.value
        if isinstance(known.source, torch.Tensor):
            torch_tensors[t.name] = known.source
    decls.extend(TensorDecl(t.name, "output", t.dtype, t.shape) for t in outputs)
    program = Program(Signature(tuple(decls)), Body(tuple(blocks)))
    if check:
        from leir.checker import check as run_checker
        from leir.errors import LeirCheckError

        info = run_checker(program)
        if not info.ok:
            raise LeirCheckError(info.errors)
    return Translation(
        program=program,
        values=values,
        input_names=tuple(t.name for t in em.inputs),
        output_names=tuple(output_names),
        ops_seen=tuple(translator.ops_seen),
        source_lines=tuple(sources),
        torch_tensors=torch_tensors,
        input_positions=tuple(translator.input_positions),
        write_order=translator.write_order_notes(),
    )


def translate_file(path: str | Path, *, sets: dict[str, Any] | None = None, dtype: str = "f32",
                   target_neutral: bool = False, check: bool = True,
                   keep_dead_blocks: bool = False,
                   input_shapes: dict[int, tuple[int, ...]] | None = None) -> Translation:
    """Translate a KernelBench-style file (``Model``, ``get_inputs``, ``get_init_inputs``)."""
    from .domains import observe_domains

    loaded = load_source(path, sets, dtype, input_shapes=input_shapes)
    translation = translate_module(loaded.model, loaded.inputs, target_neutral=target_neutral,
                                   source_path=str(Path(path)), check=check,
                                   keep_dead_blocks=keep_dead_blocks)
    translation.input_domains = observe_domains(loaded, translation.input_names, translation.input_positions)
    return translation


__all__ = ["Translation", "translate_module", "translate_file", "eliminate_dead_blocks"]
