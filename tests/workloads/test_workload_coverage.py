"""The suite covers what the frontend must support, and its Mamba scan computes the real recurrence."""

from __future__ import annotations

import torch

from workloads.registry import list_workloads, load_module

#: Operators the issue lists for level 1 (names as the workloads' ``ops`` metadata spells them).
REQUIRED_LEVEL1_OPS = {
    "linear", "matmul", "bmm", "einsum",
    "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
    "max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d", "adaptive_avg_pool2d",
    "batch_norm", "layer_norm", "group_norm", "instance_norm", "rms_norm",
    "softmax", "log_softmax",
    "relu", "leaky_relu", "elu", "selu", "gelu", "silu", "mish", "softplus", "softsign", "hardtanh",
    "hardsigmoid", "hardswish", "sigmoid", "tanh",
    "sum", "mean", "max", "min", "prod", "argmax", "argmin", "logsumexp", "norm", "normalize",
    "cumsum", "cumprod", "flip",
    "add", "sub", "mul", "truediv", "clamp", "where", "masked_fill", "triu", "tril",
    "view", "reshape", "permute", "transpose", "flatten", "squeeze", "unsqueeze", "expand", "cat", "split",
    "chunk", "getitem",
    "dropout",
    "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "cross_entropy", "nll_loss", "kl_div",
    "cosine_similarity", "triplet_margin_loss",
    "scaled_dot_product_attention",
}  # fmt: skip

#: Tags that mark the required program families of level 2.
REQUIRED_LEVEL2_TAGS = {"mha", "mqa", "gqa", "causal", "mamba", "epilogue", "residual", "layer_norm",
                        "rms_norm", "group_norm", "batch_norm"}  # fmt: skip


def _ops(level: int) -> set[str]:
    return {op for info in list_workloads(level=level) for op in info.ops}


def _tags(level: int) -> set[str]:
    return {tag for info in list_workloads(level=level) for tag in info.tags}


def test_level1_exercises_every_required_operator() -> None:
    missing = REQUIRED_LEVEL1_OPS - _ops(1)
    assert not missing, f"no level1 workload uses {sorted(missing)}"


def test_level1_covers_modes_and_attention_variants() -> None:
    tags = _tags(1)
    assert {"train", "eval", "parameter", "buffer", "causal", "gqa", "mha"} <= tags


def test_level2_has_the_required_families() -> None:
    missing = REQUIRED_LEVEL2_TAGS - _tags(2)
    assert not missing, f"no level2 workload tagged {sorted(missing)}"
    conv_epilogues = [i for i in list_workloads(level=2) if {"conv", "epilogue"} <= set(i.tags)]
    gemm_epilogues = [i for i in list_workloads(level=2) if {"gemm", "epilogue"} <= set(i.tags)]
    assert len(conv_epilogues) >= 10 and len(gemm_epilogues) >= 10


def _sequential_scan(u, delta, b, c, a, d_skip):
    """The Mamba recurrence as a plain loop over time: the reference the loop-free form must equal."""
    batch, seq, channels = u.shape
    h = torch.zeros(batch, channels, a.shape[1], dtype=u.dtype)
    ys = []
    for t in range(seq):
        h = torch.exp(delta[:, t, :, None] * a) * h + (delta[:, t] * u[:, t])[:, :, None] * b[:, t, None, :]
        ys.append((h * c[:, t, None, :]).sum(-1) + u[:, t] * d_skip)
    return torch.stack(ys, dim=1)


def test_selective_scan_equals_the_sequential_recurrence() -> None:
    module = load_module("level2/selective_scan")
    torch.manual_seed(0)
    model = module.Model(*module.get_init_inputs()).double()
    with torch.no_grad():
        model.a_log.add_(0.3 * torch.randn_like(model.a_log))  # break the symmetric initialisation
    inputs = [x.double() for x in module.get_inputs()]
    with torch.no_grad():
        got = model(*inputs)
        want = _sequential_scan(*inputs, -torch.exp(model.a_log), model.d_skip)
    assert got.shape == want.shape
    assert torch.allclose(got, want, rtol=1e-9, atol=1e-9)


def test_causal_linear_attention_equals_masked_quadratic_form() -> None:
    module = load_module("level2/linear_attention_causal")
    torch.manual_seed(0)
    model = module.Model(0.0).double()
    q, k, v = (x.double() for x in module.get_inputs())
    fq = torch.nn.functional.elu(q) + 1
    fk = torch.nn.functional.elu(k) + 1
    weights = torch.tril(fq @ fk.transpose(-2, -1))
    want = (weights @ v) / weights.sum(-1, keepdim=True)
    with torch.no_grad():
        assert torch.allclose(model(q, k, v), want, rtol=1e-9, atol=1e-9)
