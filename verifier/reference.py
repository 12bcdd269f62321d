"""What a program's outputs are checked against: the PyTorch source, the LEIR interpreter, or the parent.

A ``Reference`` turns input arrays into expected output arrays. References travel into the sandbox
worker (they run there, next to the kernel, so a reference that crashes or hangs is contained too), so
they hold only a picklable *description* and build the heavy object lazily inside the worker.

Preference order used by ``verifier.verify`` when the caller gives none:
1. ``TorchSourceReference`` — the source PyTorch module (``frontend.reference.TorchReference``), when
   the caller names the ``.py`` source;
2. ``InterpreterReference`` — the NumPy LEIR interpreter (``leir.interpreter.run``), only when the
   program's iteration count is small enough to interpret (``INTERPRETER_MAX_ITERATIONS``); otherwise it
   is skipped and the result says so;
3. the parent state's kernel, built and run on the same target and inputs (handled in ``verify``).
"""

from __future__ import annotations

import hashlib
import importlib
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol, TypeVar, runtime_checkable

import numpy as np

from leir.ast import Program, statements
from verifier.inputs import InputDomain
from verifier.result import TimingStats

T = TypeVar("T")

#: Interpreting beyond this many statement executions takes too long to be worth it per verification.
INTERPRETER_MAX_ITERATIONS = 2_000_000
#: Largest program (statement executions) whose error bound ``verify`` evaluates; above it the fixed
#: per-dtype tolerance is used. The bound runs vectorised (``verifier.error_bound``): measured 0.35-0.75 us
#: per statement execution on two shared cores (a conv net of 1.5M to 322M executions), so this costs at
#: most ~25 s per program, inside the sandbox's 120 s, and gives whole models (a ResNet-18 shrunk to a
#: 7x7 image is 24M) the computation-scaled tolerance instead of a fixed one their reductions exceed.
BOUND_MAX_ITERATIONS = 32_000_000


#: Runs of a PyTorch reference on the same inputs, compared bit for bit: one more than needed to catch a
#: reference whose result changes from run to run, and more when the frontend found writes whose
#: result depends on write order (index_put_ on 2 threads differed in 13 of 19 runs, in 2 of 19 under
#: load: eight runs all agree by chance well under 1% of the time at the former rate).
REFERENCE_RUNS = 2
REFERENCE_RUNS_WRITE_ORDER = 8


@runtime_checkable
class Reference(Protocol):
    """Something that computes the expected outputs of a program from its input arrays."""

    #: ``torch`` or ``interpreter`` (``parent`` is not an object: ``verify`` runs the parent kernel).
    kind: str

    def identity(self) -> str:
        """A stable text naming this reference, part of the result cache key."""

    def outputs(self, arrays: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Expected outputs, keyed by LEIR output name."""

    def params(self) -> dict[str, np.ndarray] | None:
        """Parameter/constant values the program must use (keyed by LEIR name), or ``None``."""


def iteration_count(program: Program) -> int:
    """Statement executions of one run: the sum over statements of their enclosing extents' product."""
    total = 0
    for _path, _assign, loops in statements(program.body):
        count = 1
        for loop in loops:
            count *= loop.extent
        total += count
    return total


def interpretable(program: Program, limit: int = INTERPRETER_MAX_ITERATIONS) -> bool:
    return iteration_count(program) <= limit


class InterpreterReference:
    """The LEIR interpreter run on the *source* (or any trusted) program: the reference without PyTorch."""

    kind = "interpreter"

    def __init__(self, program: Program):
        self.program = program

    def identity(self) -> str:
        from leir.program import program_hash

        return f"interpreter:{program_hash(self.program)}"

    def outputs(self, arrays: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        interpreter = importlib.import_module("leir.interpreter")
        result = interpreter.run(self.program, dict(arrays))
        outputs = {d.name for d in self.program.signature.by_role("output")}
        return {name: np.asarray(value) for name, value in result.items() if name in outputs}

    def params(self) -> dict[str, np.ndarray] | None:
        return None


class TorchSourceReference:
    """The PyTorch source module, loaded from ``path`` with the ``sets`` (``N=V``) shape overrides.

    Wraps ``frontend.reference.TorchReference(path, sets, dtype)`` (imported lazily, in the worker).
    """

    kind = "torch"

    def __init__(self, path: str | Path, sets: Mapping[str, Any] | None = None, dtype: str = "f32",
                 input_shapes: Mapping[int, tuple[int, ...]] | None = None):
        self.path = str(Path(path).resolve())
        self.sets = dict(sets or {})
        self.dtype = dtype
        #: ``--input-shape INDEX=SHAPE`` resizes of get_inputs() entries.
        self.input_shapes = {int(k): tuple(v) for k, v in (input_shapes or {}).items()}
        self._impl: _EagerModule | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {"path": self.path, "sets": self.sets, "dtype": self.dtype, "input_shapes": self.input_shapes,
                "_impl": None}

    def _torch(self) -> _EagerModule:
        if self._impl is None:
            # Before the frontend's concrete run folds constants with torch (``frontend.torch_math``).
            importlib.import_module("frontend.torch_math").settle()
            module = importlib.import_module("frontend.reference")
            self._impl = module.TorchReference(self.path, self.sets, self.dtype,
                                               input_shapes=getattr(self, "input_shapes", {}))
        return self._impl

    def identity(self) -> str:
        digest = hashlib.sha256(Path(self.path).read_bytes()).hexdigest()[:16]
        sets = json.dumps(self.sets, sort_keys=True, default=str)
        shapes = getattr(self, "input_shapes", {})
        resized = f":{sorted(shapes.items())}" if shapes else ""  # unchanged identity without resizes
        # inputs are drawn from the source's own domains (``input_domains``): results from before that
        # (an index of -1 that failed the reference) are not this verification's
        return f"torch:{digest}:{sets}:{self.dtype}{resized}:source-domains"

    def outputs(self, arrays: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        return {k: np.asarray(v) for k, v in self._torch().outputs(dict(arrays)).items()}

    def params(self) -> dict[str, np.ndarray] | None:
        return self._torch().params()

    def serial_outputs(self, arrays: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        return {k: np.asarray(v) for k, v in self._torch().serial_outputs(dict(arrays)).items()}

    def write_order(self) -> tuple[str, ...]:
        """The frontend's notes on writes whose result depends on write order
        (``Translation.write_order``)."""
        return self._torch().write_order_notes

    def inputs(self) -> dict[str, np.ndarray]:
        """The file's own ``get_inputs()`` values by LEIR name (what ``time_eager`` can be given)."""
        return self._torch().inputs()

    def input_domains(self) -> dict[str, InputDomain]:
        """What the file's ``get_inputs()`` gives each input (``frontend.domains``): the inputs drawn from
        them keep the reference inside its own domain (an index never -1, a ``log`` argument positive)."""
        from verifier.inputs import domains_from_json

        return domains_from_json(self._torch().input_domains())

    def time_eager(self, arrays: Mapping[str, np.ndarray], **options: Any) -> tuple[TimingStats, str]:
        """Time the eager module's forward on ``arrays`` with ``verifier.timing``'s protocol.

        Returns ``(TimingStats, what was timed)``; the frontend runs the forward (torch is its business)."""
        from verifier.timing import time_callable

        stats = self._torch().measure_eager(arrays, lambda call: time_callable(call, **options))
        return stats, "eager forward only"


    def measure_eager_and_compiled(self, arrays: Mapping[str, np.ndarray],
                                   timer: Callable[[Callable[[], Any], Callable[[], Any] | None, str], T]
                                   ) -> T:
        """``timer(eager_call, compiled_call, note)``: the frontend's eager forward and its
        ``torch.compile`` on ``arrays``, gradients off (``tuner.compare`` times them beside a kernel)."""
        return self._torch().measure_eager_and_compiled(arrays, timer)


class _EagerModule(Protocol):
    """What ``frontend.reference.TorchReference`` offers (reached by name: only the frontend imports
    torch)."""

    def outputs(self, arrays: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]: ...

    def params(self) -> dict[str, np.ndarray]: ...

    def inputs(self) -> dict[str, np.ndarray]: ...

    def input_domains(self) -> dict[str, Any]: ...

    def serial_outputs(self, arrays: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]: ...

    @property
    def write_order_notes(self) -> tuple[str, ...]: ...

    def measure_eager(self, arrays: Mapping[str, np.ndarray],
                      timer: Callable[[Callable[[], Any]], T]) -> T: ...

    def measure_eager_and_compiled(self, arrays: Mapping[str, np.ndarray],
                                   timer: Callable[[Callable[[], Any], Callable[[], Any] | None, str], T]
                                   ) -> T: ...


def unstable_reference(reference: object, arrays: Mapping[str, np.ndarray],
                       expected: Mapping[str, np.ndarray], notes: list[str]) -> bool:
    """Run a PyTorch ``reference`` again on ``arrays``; ``True`` (and a note) when a run's outputs differ
    bit for bit from ``expected``, its first run's: a reference that changes from run to run cannot decide
    pass or fail. Where the frontend found write-order-dependent writes, their notes are added either way.
    """
    if not isinstance(reference, TorchSourceReference):
        return False  # the interpreter and the parent's kernel are deterministic
    order = reference.write_order()
    runs = REFERENCE_RUNS_WRITE_ORDER if order else REFERENCE_RUNS
    for run in range(1, runs):
        # with write-order-dependent writes the last run is on one thread: the source's own order, which
        # a parallel run departs from wherever repeated indices fall in two threads' shares
        serial = bool(order) and run == runs - 1
        again = reference.serial_outputs(arrays) if serial else reference.outputs(arrays)
        changed = {name: _differing(again[name], want) for name, want in expected.items() if name in again}
        if any(changed.values()):
            what = ", ".join(f"{n:,} of {np.asarray(expected[k]).size:,} elements of {k}"
                             for k, n in changed.items() if n)
            which = "a run on one thread" if serial else f"run {run + 1}"
            why = ("; ".join(order) if order else "its result depends on something other than its inputs "
                   "(thread timing, state kept between calls)")
            fix = ("unique indices, or accumulate=True / scatter_reduce" if order
                   else "a forward that depends on its inputs and parameters only")
            notes.append(f"the PyTorch reference's outputs changed between its first run and {which} on the "
                         f"same inputs ({what}): {why}. Not compared (neither pass nor fail): make the "
                         f"source deterministic ({fix})")
            return True
    for line in order:
        notes.append(f"{line}; {runs} runs of the reference, one of them on one thread, agreed on these "
                     "inputs")
    return False


def _differing(first: object, second: object) -> int:
    """Elements of the two arrays that differ (NaN equals NaN: the same run gives the same NaN)."""
    a, b = np.asarray(first), np.asarray(second)
    if a.shape != b.shape:
        return max(a.size, b.size, 1)
    if a.dtype.kind in "biu":
        return int(np.count_nonzero(a != b))
    a, b = a.astype(np.float64), b.astype(np.float64)
    return int(np.count_nonzero(~((a == b) | (np.isnan(a) & np.isnan(b)))))


def params_digest(params: Mapping[str, np.ndarray] | None) -> str:
    """A stable digest of parameter values (part of the cache key)."""
    if not params:
        return ""
    digest = hashlib.sha256()
    for name in sorted(params):
        value = np.ascontiguousarray(params[name])
        digest.update(name.encode())
        digest.update(str(value.dtype).encode())
        digest.update(str(value.shape).encode())
        digest.update(value.tobytes())
    return digest.hexdigest()
