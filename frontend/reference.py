"""The PyTorch reference of a translated source file, for the verifier.

``TorchReference(path, sets, dtype)`` loads the file exactly as ``translate_file`` does (same seed, same
``--set`` overrides, same dtype) and translates it once to learn the LEIR names of inputs, parameters
and outputs; ``outputs(arrays)`` then maps LEIR input arrays to the forward arguments (and any LEIR
param arrays into the module's own tensors), runs the eager module and returns its outputs by LEIR name.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import torch

from .loading import DTYPES, load_source
from .registry import from_numpy, to_numpy
from .translate import Translation, flatten_outputs, translate_module

T = TypeVar("T")


class TorchReference:
    """Eager PyTorch execution of a KernelBench-style file, keyed by LEIR tensor names."""

    def __init__(self, path: str | Path, sets: Mapping[str, Any] | None = None, dtype: str = "f32",
                 *, target_neutral: bool = False,
                 input_shapes: Mapping[int, tuple[int, ...]] | None = None) -> None:
        self.path = Path(path)
        self.sets = dict(sets or {})
        self.dtype = dtype
        self.loaded = load_source(self.path, self.sets, dtype, input_shapes=dict(input_shapes or {}))
        #: The (checked) translation of this very model instance: its param tensors are the module's own.
        self.translation: Translation = translate_module(
            self.loaded.model, self.loaded.inputs, source_path=str(self.path), target_neutral=target_neutral)
        self._defaults = list(self.loaded.inputs)
        self._domains: dict[str, dict[str, Any]] | None = None

    @property
    def model(self) -> torch.nn.Module:
        """The eager module (already in the requested dtype and the file's own train/eval mode)."""
        return self.loaded.model

    @property
    def input_names(self) -> tuple[str, ...]:
        return self.translation.input_names

    @property
    def output_names(self) -> tuple[str, ...]:
        return self.translation.output_names

    def params(self) -> dict[str, np.ndarray]:
        """Parameter and constant values by LEIR name (what ``OUT.npz`` holds)."""
        return {k: v.copy() for k, v in self.translation.values.items()}

    def inputs(self) -> dict[str, np.ndarray]:
        """The file's own ``get_inputs()`` values by LEIR name (tensor arguments only)."""
        return {name: to_numpy(self._defaults[pos])
                for name, pos in zip(self.translation.input_names, self.translation.input_positions,
                                     strict=True)}

    def input_domains(self) -> dict[str, dict[str, Any]]:
        """What ``get_inputs()`` gives each input, by LEIR name (``frontend.domains``), as JSON values."""
        from .domains import observe_domains

        if self._domains is None:  # drawn once per reference: get_inputs() can be large
            self._domains = observe_domains(self.loaded, self.translation.input_names,
                                            self.translation.input_positions)
        return {name: dict(domain) for name, domain in self._domains.items()}

    def forward_args(self, arrays: Mapping[str, np.ndarray]) -> list[Any]:
        """The forward's arguments for ``arrays`` (LEIR names); param arrays are loaded into the module."""
        args = list(self._defaults)
        for name, pos in zip(self.translation.input_names, self.translation.input_positions, strict=True):
            if name in arrays:
                like = self._defaults[pos]
                # a copy: a forward that writes its input in place (x.index_put_) must not change the
                # caller's arrays, which the kernel, the error bound and a repeated run read again
                args[pos] = from_numpy(arrays[name], like.dtype)
        with torch.no_grad():
            for name, tensor in self.translation.torch_tensors.items():
                if name in arrays:
                    tensor.copy_(from_numpy(arrays[name], tensor.dtype))  # keeps 0-d params 0-d
        return args

    def _run(self, args: list[Any]) -> Any:
        with torch.no_grad():
            return self.loaded.model(*args)

    def outputs(self, arrays: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Run the eager module on ``arrays`` (LEIR input names; missing ones use ``get_inputs()``)."""
        result = self._run(self.forward_args(arrays))
        flat = flatten_outputs(result)
        if len(flat) != len(self.translation.output_names):
            raise RuntimeError(f"{self.path}: forward returned {len(flat)} tensors, the program declares "
                               f"{len(self.translation.output_names)} outputs")
        return {name: to_numpy(t)
                for name, t in zip(self.translation.output_names, flat, strict=True)}

    @property
    def write_order_notes(self) -> tuple[str, ...]:
        """The translation's notes on writes whose result depends on write order."""
        return tuple(self.translation.write_order)

    def serial_outputs(self, arrays: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        """``outputs`` on one thread: writes through repeated indices then land in the source's own order
        (the last in row-major order wins), whatever thread happened to write last in a parallel run."""
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            return self.outputs(arrays)
        finally:
            torch.set_num_threads(threads)

    def measure_eager(self, arrays: Mapping[str, np.ndarray], timer: Callable[[Callable[[], Any]], T]) -> T:
        """``timer(call)`` where ``call`` runs the eager forward on ``arrays``, with gradients off once around
        the whole measurement: entering ``torch.no_grad()`` costs milliseconds per call with this torch
        build, which would flatter every kernel's speedup against PyTorch."""
        model = self.model
        args = self.forward_args(arrays)
        with torch.no_grad():
            return timer(lambda: model(*args))

    def measure_eager_and_compiled(self, arrays: Mapping[str, np.ndarray],
                                   timer: Callable[[Callable[[], Any], Callable[[], Any] | None, str], T]
                                   ) -> T:
        """``timer(eager_call, compiled_call, note)`` with gradients off around the whole measurement:
        ``compiled_call`` runs ``torch.compile(model)`` (inductor; compiled by one call here, so its
        compile time is not timed), or is ``None`` with ``note`` saying why when compiling fails."""
        model = self.model
        args = self.forward_args(arrays)
        with torch.no_grad():
            compiled: Callable[[], Any] | None = None
            note = "torch.compile (inductor)"
            try:
                function = torch.compile(model)
                function(*args)
                compiled = lambda: function(*args)  # noqa: E731
            except Exception as exc:  # a model inductor cannot compile: eager is still timed
                note = f"torch.compile failed: {type(exc).__name__}: {str(exc)[:200]}"
            return timer(lambda: model(*args), compiled, note)

    def time_eager(self, arrays: Mapping[str, np.ndarray], repeat: int = 5) -> list[float]:
        """Seconds per eager forward, ``repeat`` times after one warm-up run."""
        args = self.forward_args(arrays)
        self._run(args)
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            self._run(args)
            times.append(time.perf_counter() - start)
        return times


__all__ = ["TorchReference", "DTYPES"]
