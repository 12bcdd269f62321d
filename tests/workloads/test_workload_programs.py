"""Every built-in workload runs eagerly in f32 (levels 1 and 2 also in f64), deterministically, within the
small-shape budget.

Level 3 (LLM inference) differs on purpose: its sampling masks write ``-inf`` into the logits they mask,
its fp8 workloads return fp8 tensors, and its serving kernels upcast to f32 inside (scales, routing,
cumulative sums) as real ones do, so a whole-model ``.double()`` mixes dtypes, and some write in place
(top-p scatters back), which plain ``fx.symbolic_trace`` cannot follow but the frontend's other tracers
can. Level 3 is checked here in f32 (budget, determinism, finiteness) and translated and verified in f32
and bf16 by ``tests/frontend/test_workloads.py``.
"""

from __future__ import annotations

import pytest
import torch
from torch import fx
from torch.utils.flop_counter import FlopCounterMode

from workloads.registry import list_workloads, load_module

#: ≲ 2e6 multiply-adds per workload; FlopCounterMode counts 2 FLOPs per multiply-add.
MAX_FLOPS = 4_000_000
#: Largest tensor (input, parameter, buffer or output) a default-shaped workload may hold.
MAX_ELEMENTS = 100_000

WORKLOADS = list_workloads()


def _tensors(value: object) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, list | tuple):
        return [t for item in value for t in _tensors(item)]
    raise AssertionError(f"forward returned {type(value).__name__}, expected tensors")


def _build(module):
    torch.manual_seed(0)
    model = module.Model(*module.get_init_inputs())
    inputs = module.get_inputs()
    return model, inputs


def _to_double(inputs: list) -> list:
    return [x.double() if isinstance(x, torch.Tensor) and x.is_floating_point() else x for x in inputs]


def _assert_finite(outputs: list[torch.Tensor], what: str, masks: bool = False) -> None:
    """No NaN or inf in a float output (``masks``: ``-inf`` is a masked logit, not an overflow)."""
    for out in outputs:
        if out.is_floating_point():
            values = out.float()  # fp8 has no isfinite of its own
            if masks:
                values = torch.where(values == -torch.inf, torch.zeros_like(values), values)
            assert torch.isfinite(values).all(), f"{what}: non-finite output"


@pytest.mark.parametrize("info", WORKLOADS, ids=[i.id for i in WORKLOADS])
def test_workload_runs_in_f32_and_f64(info) -> None:
    module = load_module(info)
    model, inputs = _build(module)
    assert isinstance(inputs, list) and inputs, "get_inputs() must return a non-empty list"
    for x in inputs:
        assert isinstance(x, torch.Tensor)
        assert x.numel() <= MAX_ELEMENTS, f"input of {x.numel()} elements"
    for name, t in [*model.named_parameters(), *model.named_buffers()]:
        assert t.numel() <= MAX_ELEMENTS, f"{name} holds {t.numel()} elements"

    with torch.no_grad(), FlopCounterMode(display=False) as counter:
        out32 = _tensors(model(*inputs))
    assert counter.get_total_flops() <= MAX_FLOPS, f"{counter.get_total_flops()} FLOPs"
    for out in out32:
        assert out.numel() <= MAX_ELEMENTS
    llm = info.level == 3
    _assert_finite(out32, "f32", masks=llm)

    # Same seed, fresh model, now in eval mode: identical result. This checks construction and forward are
    # deterministic and that the train/eval flag does not matter (eval-only behaviour is written explicitly).
    again_model, again_inputs = _build(module)
    again_model.eval()
    with torch.no_grad():
        again = _tensors(again_model(*again_inputs))
    for a, b in zip(out32, again, strict=True):
        assert torch.equal(a, b), "output not reproducible from the seed, or it depends on train/eval mode"

    if llm:
        return  # in-place writes (top-p's scatter back) need the frontend's other tracers; see the docstring
    # The frontend starts from torch.fx.symbolic_trace: no data-dependent control flow, no shape unpacking.
    traced = fx.symbolic_trace(again_model)
    with torch.no_grad():
        for a, t in zip(out32, _tensors(traced(*again_inputs)), strict=True):
            assert torch.equal(a, t), "fx-traced graph disagrees with eager forward"

    model64 = model.double()
    inputs64 = _to_double(inputs)
    with torch.no_grad():
        out64 = _tensors(model64(*inputs64))
    _assert_finite(out64, "f64")
    for a, b in zip(out32, out64, strict=True):
        assert a.shape == b.shape
        if b.is_floating_point():
            assert b.dtype == torch.float64, "f64 run produced a non-f64 output"
            scale = 1.0 + b.abs().max().item()
            assert (a.double() - b).abs().max().item() <= 2e-3 * scale, "f32 and f64 disagree"
        else:
            assert torch.equal(a, b)


def test_shape_constants_drive_the_program() -> None:
    """Overriding a module constant (what ``--set`` does) changes the built inputs and the output."""
    module = load_module("level1/matmul")
    module.M, module.N = 5, 7
    model, inputs = _build(module)
    with torch.no_grad():
        assert tuple(model(*inputs).shape) == (5, 7)
    fresh = load_module("level1/matmul")
    assert fresh.M != 5, "load_module must return a fresh module"


@pytest.mark.parametrize("info", WORKLOADS, ids=[i.id for i in WORKLOADS])
def test_paper_shapes_are_consistent(info) -> None:
    """At paper scale the program still type-checks: built and run on the meta device (shapes only)."""
    module = load_module(info)
    for name, value in info.paper_shapes.items():
        setattr(module, name, value)
    with torch.device("meta"):
        model = module.Model(*module.get_init_inputs())
        inputs = module.get_inputs()
        outputs = _tensors(model(*inputs))
    assert all(out.device.type == "meta" for out in outputs)
    # Paper scale is meant to be larger than the CPU default somewhere.
    assert any(value > info.default_shapes[name] for name, value in info.paper_shapes.items()), info.id
