"""The values a source's ``get_inputs()`` gives each input: what the verifier draws its inputs from.

Why: an index tensor the source draws by ``torch.randint(0, 1024, ...)`` fed -1 by the verifier's own
rule makes the PyTorch reference itself fail (``index -1 is out of bounds``), and a ``log`` of ``rand()``
fed negative numbers compares NaN with NaN. So the domain of every tensor input is observed by running
``get_inputs()`` a few more times (seeded, the caller's RNG state untouched) and taking what was seen:

* a bool tensor: ``{"kind": "bool"}`` (a mask);
* an integer tensor, or a float tensor whose values are all whole numbers (``randint(...).float()``,
  ``ones``): ``{"kind": "int", "low": min, "high": max}`` — the observed range, inside the true one, so
  never an out-of-range index;
* any other float tensor: ``{"kind": "float", "low": min, "high": max}``, except one with values of both
  signs beyond ±1 (``randn``-like: unbounded), which gets no domain and keeps the verifier's normal draw.

Plain JSON values (no verifier type: the frontend does not import the verifier); ``steptp translate``
writes them to ``OUT.inputs.json`` and ``verifier.inputs.domains_from_json`` reads them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from .loading import DTYPES, LoadedSource, _call, _cpu_placement, cast_value

#: Extra ``get_inputs()`` draws besides the one the translation used.
DRAWS = 3
_DRAW_SEED = 0x5EED


def _domain(samples: Sequence[torch.Tensor]) -> dict[str, Any] | None:
    flat = torch.cat([s.detach().reshape(-1).cpu() for s in samples])
    if flat.numel() == 0:
        return None
    if flat.dtype == torch.bool:
        return {"kind": "bool", "low": None, "high": None}
    if not flat.is_floating_point():
        return {"kind": "int", "low": int(flat.min()), "high": int(flat.max())}
    wide = flat.double()
    if not bool(torch.isfinite(wide).all()):
        return None
    low, high = float(wide.min()), float(wide.max())
    if bool((wide == wide.round()).all()):
        return {"kind": "int", "low": int(low), "high": int(high)}
    if low < 0 < high and max(-low, high) > 1.0:
        return None  # both signs and beyond ±1: normal-like, the verifier's default draw fits it
    return {"kind": "float", "low": low, "high": high}


def observe_domains(loaded: LoadedSource, names: Sequence[str], positions: Sequence[int],
                    draws: int = DRAWS) -> dict[str, dict[str, Any]]:
    """``{LEIR input name: domain}`` over ``loaded.inputs`` and ``draws`` more seeded ``get_inputs()``."""
    samples: list[list[Any]] = [list(loaded.inputs)]
    torch_dtype = DTYPES[loaded.dtype]
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(_DRAW_SEED)
        for _ in range(draws):
            with _cpu_placement():
                raw = _call(loaded.path, "get_inputs()", lambda: list(loaded.module.get_inputs()))
            samples.append([cast_value(v, torch_dtype) for v in raw])
    domains: dict[str, dict[str, Any]] = {}
    for name, position in zip(names, positions, strict=True):
        tensors = [draw[position] for draw in samples
                   if position < len(draw) and isinstance(draw[position], torch.Tensor)
                   and draw[position].dtype == samples[0][position].dtype]
        domain = _domain(tensors) if tensors else None
        if domain is not None:
            domains[name] = domain
    return domains
