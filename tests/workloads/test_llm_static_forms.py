"""Level 3 (issue 46): each static-shape form computes what the dynamic kernel it stands for computes.

The LEIR translations are checked against these very modules elsewhere (``tests/frontend/test_workloads``);
here the modules themselves are checked against plain dynamic references — Python loops over tokens,
experts and time, ``scaled_dot_product_attention``, a contiguous KV cache — so a static form that
translated faithfully but meant something else would fail.
"""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from workloads.registry import list_workloads, load_module

#: Families issue 46 asks of the LLM level, as tags.
REQUIRED_TAGS = {"rms_norm", "rope", "swiglu", "gqa", "kv_cache", "paged", "online_softmax", "topk",
                 "sort", "fp8", "block_scale", "int4", "gemv", "moe", "dispatch", "capacity",
                 "linear_attention", "delta_rule", "chunked"}  # fmt: skip


def _run(name: str, *inputs):
    module = load_module(f"level3/{name}")
    torch.manual_seed(0)
    model = module.Model(*module.get_init_inputs())
    with torch.no_grad():
        return module, model, model(*inputs)


def test_level3_covers_the_issue_families():
    infos = list_workloads(level=3)
    assert len(infos) >= 20
    missing = REQUIRED_TAGS - {tag for info in infos for tag in info.tags}
    assert not missing, f"no level3 workload tagged {sorted(missing)}"
    assert all("llm" in info.tags for info in infos)


def test_paged_attention_equals_attention_over_the_contiguous_cache():
    module = load_module("level3/paged_attention_decode")
    torch.manual_seed(1)
    b, h, kvh, d, blk, nb, mb = (module.BATCH, module.HEADS, module.KV_HEADS, module.HEAD_DIM, module.BLOCK,
                                 module.NUM_BLOCKS, module.MAX_BLOCKS)
    q = torch.randn(b, h, d)
    k_pool, v_pool = torch.randn(nb, blk, kvh, d), torch.randn(nb, blk, kvh, d)
    table = torch.stack([torch.randperm(nb)[:mb] for _ in range(b)])
    lens = torch.tensor([5, mb * blk])[:b]
    _, _, got = _run("paged_attention_decode", q, k_pool, v_pool, table, lens)
    for i in range(b):
        n = int(lens[i])
        k = k_pool[table[i]].reshape(mb * blk, kvh, d)[:n].permute(1, 0, 2)  # (kvh, n, d)
        v = v_pool[table[i]].reshape(mb * blk, kvh, d)[:n].permute(1, 0, 2)
        k, v = k.repeat_interleave(h // kvh, 0), v.repeat_interleave(h // kvh, 0)
        want = F.scaled_dot_product_attention(q[i][:, None], k, v)[:, 0]
        torch.testing.assert_close(got[i], want, rtol=1e-5, atol=1e-5)


def test_flash_attention_forward_equals_causal_sdpa():
    module = load_module("level3/flash_attention_forward")
    torch.manual_seed(2)
    q, k, v = (torch.randn(module.BATCH, module.HEADS, module.SEQ, module.HEAD_DIM) for _ in range(3))
    _, _, got = _run("flash_attention_forward", q, k, v)
    torch.testing.assert_close(got, F.scaled_dot_product_attention(q, k, v, is_causal=True),
                               rtol=1e-5, atol=1e-5)


def test_top_p_mask_keeps_the_smallest_set_reaching_p():
    module = load_module("level3/top_p_mask")
    torch.manual_seed(3)
    logits = torch.randn(module.BATCH, module.VOCAB) * 3
    _, _, got = _run("top_p_mask", logits)
    for row, out in zip(logits, got, strict=True):
        probs = row.softmax(-1)
        order = probs.argsort(descending=True)
        kept, total = set(), 0.0
        for index in order.tolist():  # the dynamic form: accumulate until the mass passes p
            kept.add(index)
            total += float(probs[index])
            if total >= module.TOP_P:
                break
        assert {i for i in range(len(row)) if math.isfinite(out[i])} == kept


def test_chunked_scan_equals_the_sequential_recurrence():
    module = load_module("level3/chunked_scan")
    torch.manual_seed(4)
    x, a_logit = torch.randn(module.BATCH, module.SEQ, module.CHANNELS), torch.randn(module.BATCH, module.SEQ,
                                                                                     module.CHANNELS)
    _, _, got = _run("chunked_scan", x, a_logit)
    a, h, want = torch.sigmoid(a_logit), torch.zeros(module.BATCH, module.CHANNELS), []
    for t in range(module.SEQ):
        h = a[:, t] * h + x[:, t]
        want.append(h)
    torch.testing.assert_close(got, torch.stack(want, 1), rtol=1e-5, atol=1e-5)


def test_delta_rule_equals_the_textbook_update():
    module = load_module("level3/delta_rule_attention")
    torch.manual_seed(5)
    shape = (module.BATCH, module.HEADS, module.SEQ, module.HEAD_DIM)
    q, k, v, beta = torch.randn(shape), torch.randn(shape), torch.randn(shape), torch.randn(shape[:3])
    _, _, got = _run("delta_rule_attention", q, k, v, beta)
    k, beta = F.normalize(k, dim=-1), torch.sigmoid(beta)
    for b in range(shape[0]):
        for hd in range(shape[1]):
            state = torch.zeros(shape[3], shape[3])  # (d_k, d_v)
            for t in range(shape[2]):
                kt, vt = k[b, hd, t], v[b, hd, t]
                state = state - beta[b, hd, t] * torch.outer(kt, state.t() @ kt - vt)
                torch.testing.assert_close(got[b, hd, t], state.t() @ q[b, hd, t], rtol=1e-5, atol=1e-5)


def test_moe_expert_gemms_equal_a_loop_over_experts_and_slots():
    module = load_module("level3/moe_expert_gemms")
    torch.manual_seed(6)
    x = torch.randn(module.TOKENS, module.HIDDEN)
    index = torch.randint(0, module.TOKENS, (module.EXPERTS, module.CAPACITY))
    weight = torch.rand(module.EXPERTS, module.CAPACITY)
    _, model, got = _run("moe_expert_gemms", x, index, weight)
    want = torch.zeros_like(x)
    for e in range(module.EXPERTS):
        for c in range(module.CAPACITY):
            t = int(index[e, c])
            h = F.silu(x[t] @ model.w_gate[e]) * (x[t] @ model.w_up[e])
            want[t] += weight[e, c] * (h @ model.w_down[e])
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)


def test_moe_capacity_dispatch_drops_tokens_past_the_capacity():
    module = load_module("level3/moe_capacity_dispatch")
    torch.manual_seed(7)
    model = module.Model()
    x = torch.randn(module.TOKENS, module.HIDDEN) + 3 * model.gate.weight[0]  # expert 0 overflows
    with torch.no_grad():
        expert_inputs, combine = model(x)
    expert = model.gate(x).argmax(-1).tolist()
    want, fill = torch.zeros(module.EXPERTS, module.CAPACITY, module.HIDDEN), [0] * module.EXPERTS
    for t, e in enumerate(expert):  # the dynamic form: a counter per expert
        if fill[e] < module.CAPACITY:
            want[e, fill[e]] = x[t]
        fill[e] += 1
    assert max(fill) > module.CAPACITY, "the seed must overflow one expert for the test to mean anything"
    torch.testing.assert_close(expert_inputs, want)
    assert int((combine > 0).sum()) == sum(min(f, module.CAPACITY) for f in fill)


@pytest.mark.parametrize("name", ["w4a16_gemm", "dequant_gemv_int4"])
def test_int4_unpacking_recovers_the_nibbles(name):
    module = load_module(f"level3/{name}")
    torch.manual_seed(8)
    model = module.Model()
    low, high = model.packed & 0xF, model.packed >> 4
    nibbles = torch.stack([low, high], -1).reshape(module.OUT, module.IN)
    assert torch.equal(nibbles[:, 0::2] | (nibbles[:, 1::2] << 4), model.packed)
