"""Inputs drawn from the source's own domains (issue 43, item 1) and large-offset inputs (issue 40, item 4).

The sources under ``sources/domains`` draw index tensors with ``randint``, a mask with ``rand() > t`` and
a ``log`` argument with ``rand()``: each is translated and verified against PyTorch through the CLI, the
path a user takes. Before the domains, the index programs ended ``execute`` — the PyTorch reference
itself failed on an index of -1 the verifier had drawn.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from leir.program import load_program
from steptp_cli.main import main as steptp
from verifier.inputs import (
    LARGE_OFFSETS,
    InputDomain,
    domains_from_json,
    generate_tensor,
    make_inputs,
)

SOURCES = Path(__file__).parent / "sources" / "domains"

#: source file -> {LEIR input name: expected domain kind}
EXPECTED_KINDS = {
    "index_add": {"C": "int"},
    "scatter_add": {"C": "int"},
    "index_copy": {"C": "int"},
    "masked_fill_mask": {"C": "bool"},
    "log_rand": {"A": "float"},
}


@pytest.fixture(scope="module")
def translated(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("domains")
    for name in EXPECTED_KINDS:
        assert steptp(["translate", str(SOURCES / f"{name}.py"), "-o", str(out / f"{name}.leir")]) == 0
    return out


@pytest.mark.parametrize("name", sorted(EXPECTED_KINDS))
def test_translate_records_each_inputs_domain_beside_the_program(translated: Path, name: str):
    domains = domains_from_json(json.loads((translated / f"{name}.inputs.json").read_text()))
    assert {k: d.kind for k, d in domains.items()} == EXPECTED_KINDS[name]
    for domain in domains.values():
        if domain.kind == "int":  # randint(0, n): the observed range lies inside [0, n-1]
            assert domain.low is not None and domain.high is not None and 0 <= domain.low <= domain.high
    if name == "log_rand":
        assert domains["A"].low >= 1e-3 and domains["A"].high <= 1.0 + 1e-3  # rand() + 1e-3


@pytest.mark.parametrize("special", [False, True], ids=["seeded", "special"])
@pytest.mark.parametrize("name", sorted(EXPECTED_KINDS))
def test_each_source_verifies_against_pytorch_with_its_own_inputs(translated: Path, name: str, special: bool,
                                                                 capsys, monkeypatch, tmp_path: Path):
    monkeypatch.setenv("STEPTP_CACHE_DIR", str(tmp_path / "cache"))
    args = ["verify", str(translated / f"{name}.leir"), "--source", str(SOURCES / f"{name}.py"), "--json"]
    code = steptp(args + (["--special-values"] if special else []))
    data = json.loads(capsys.readouterr().out)
    assert data["reference"] == "torch", data["notes"]
    assert not [n for n in data["notes"] if "failed" in n], data["notes"]
    assert (code, data["outcome"]) == (0, "pass"), data


def test_the_default_rule_feeds_out_of_range_indices_the_domain_never_does(translated: Path):
    """What the domains fix: without them the index input of index_add holds negative values."""
    program = load_program((translated / "index_add.leir").read_text())
    domains = domains_from_json(json.loads((translated / "index_add.inputs.json").read_text()))
    plain = make_inputs(program, seed=0)
    assert plain["C"].min() < 0
    for special in (False, True):
        for seed in range(4):
            arrays = make_inputs(program, seed=seed, special_values=special, domains=domains)
            assert domains["C"].low <= arrays["C"].min() and arrays["C"].max() <= domains["C"].high
    # same seed, same bytes
    again = make_inputs(program, seed=3, special_values=True, domains=domains)
    repeat = make_inputs(program, seed=3, special_values=True, domains=domains)
    assert all(again[k].tobytes() == repeat[k].tobytes() for k in again)


def test_a_pytorch_reference_gives_its_own_domains_without_the_file(translated: Path, tmp_path: Path):
    """``verify(..., reference=TorchSourceReference)`` with no domains passed: the source's are used."""
    from verifier.reference import TorchSourceReference
    from verifier.verify import verify

    program = load_program((translated / "scatter_add.leir").read_text())
    result = verify(program, reference=TorchSourceReference(SOURCES / "scatter_add.py"), cache=False)
    assert result.outcome.value == "pass", result.notes


def test_domain_values_and_special_values_stay_inside():
    domain = InputDomain("int", 3, 9)
    values = generate_tensor("I", "i64", (4096,), seed=1, special_values=True, domain=domain)
    assert values.min() == 3 and values.max() == 9
    # the program's own index bound narrows the domain: never outside either
    narrowed = generate_tensor("I", "i32", (4096,), seed=1, special_values=True, domain=domain, index_bound=5)
    assert set(np.unique(narrowed)) == {3, 4}
    floats = generate_tensor("P", "f32", (4096,), seed=1, domain=InputDomain("float", 0.25, 0.5))
    assert floats.min() >= 0.25 and floats.max() <= 0.5
    whole = generate_tensor("W", "f32", (512,), seed=1, domain=InputDomain("int", -2, 2))
    assert set(np.unique(whole)) == {-2.0, -1.0, 0.0, 1.0, 2.0}
    mask = generate_tensor("M", "bool", (512,), seed=1, domain=InputDomain("bool"))
    assert mask.dtype == np.bool_ and 0 < mask.sum() < 512


@pytest.mark.parametrize("bad", [{"kind": "complex"}, {"kind": "int", "low": 4, "high": 1}, {"kind": "int"},
                                 {"low": 0}, {"kind": "float", "low": "0", "high": 1}, [1, 2]])
def test_malformed_domains_are_refused_clearly(bad):
    with pytest.raises(ValueError):
        domains_from_json({"A": bad})


def test_cli_refuses_an_unreadable_domains_file(translated: Path, tmp_path: Path, capsys):
    broken = tmp_path / "broken.json"
    broken.write_text('{"C": {"kind": "int", "low": 5, "high": 1}}')
    assert steptp(["verify", str(translated / "index_add.leir"), "--domains", str(broken)]) == 2
    assert "cannot read input domains" in capsys.readouterr().err


# ------------------------------------------------------------------------------- large-offset inputs

OFFSET_PROGRAM = """\
input  A: f16[64]
input  B: f32[64]
input  I: i64[8]
input  M: bool[8]
param  W: f32[64]
output C: f32[64]
output D: f32[8]
---
L^{64}_{i=0}[
  C^{f32,g}_{i} = A^{f16,g}_{i}+B^{f32,g}_{i}*W^{f32,g}_{i};
];
L^{8}_{j=0}[
  D^{f32,g}_{j} = if_then_else(M^{bool,g}_{j}, B^{f32,g}_{I^{i64,g}_{j}}, 0.0);
];
"""


def test_large_offset_shifts_float_inputs_only():
    program = load_program(OFFSET_PROGRAM)
    plain = make_inputs(program, seed=0)
    shifted = make_inputs(program, seed=0, large_offset=True)
    assert np.allclose(shifted["B"], plain["B"] + LARGE_OFFSETS["f32"], atol=1e-3)
    assert np.isfinite(shifted["A"]).all() and abs(float(shifted["A"].mean()) - LARGE_OFFSETS["f16"]) < 1
    for name in ("I", "M", "W"):  # indices, masks and parameters are drawn as usual
        assert np.array_equal(shifted[name], plain[name])
    assert shifted["I"].min() >= 0 and shifted["I"].max() < 64
    repeat = make_inputs(program, seed=0, large_offset=True)
    assert all(shifted[k].tobytes() == repeat[k].tobytes() for k in shifted)


LAYER_NORM = Path(__file__).resolve().parents[2] / "workloads" / "level1" / "layer_norm.py"


def test_layer_norm_passes_against_pytorch_on_large_offset_inputs_and_its_expansion_fails(
        tmp_path: Path, capsys, monkeypatch):
    """The correct layer norm holds on 1000 + N(0,1) against PyTorch (its error bound evaluated on those
    inputs); the step expanding its variance into E[x^2]-E[x]^2 fails there against it, with the reason."""
    monkeypatch.setenv("STEPTP_CACHE_DIR", str(tmp_path / "cache"))
    source = tmp_path / "ln.leir"
    assert steptp(["translate", str(LAYER_NORM), "-o", str(source)]) == 0
    capsys.readouterr()
    assert steptp(["verify", str(source), "--source", str(LAYER_NORM), "--large-offset", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["outcome"] == "pass" and data["tolerance"] == "scaled"
    assert any("large-offset inputs" in n for n in data["notes"])
    expanded = tmp_path / "ln_expanded.leir"
    assert steptp(["apply", str(source), "expand_factorization", "--site", "0", "-o", str(expanded)]) == 0
    (tmp_path / "ln_expanded.npz").write_bytes((tmp_path / "ln.npz").read_bytes())
    capsys.readouterr()
    against = ["verify", str(expanded), "--against", str(source), "--reference", "parent", "--json"]
    assert steptp(against) == 0  # seeded normal inputs: numerically equivalent
    assert json.loads(capsys.readouterr().out)["outcome"] == "pass"
    assert steptp([*against, "--large-offset"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["outcome"] == "fail" and "much less accurate" in data["error"]
    assert data["max_abs_error"] > 1e-2
