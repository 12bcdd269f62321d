"""What every strategy test needs: real source programs, and the two checks a step must pass.

Programs come from the built-in workloads through the real frontend (small default shapes), so each
strategy is tried on what the dataset is generated from. A step is accepted only if the interpreter
gives the parent's outputs (bitwise for E steps) and the TVM-built kernel verifies against the parent
(``equal_pass`` for E steps, ``pass`` for N).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import numpy as np

from leir.ast import Program
from leir.interpreter import run
from leir.program import load_program
from strategies import AppliedStep, Exactness

REPO = Path(__file__).resolve().parents[2]


@cache
def workload(workload_id: str, dtype: str = "f32") -> Program:
    """The LEIR source state of a built-in workload (``level1/softmax``), translated by the frontend."""
    from frontend import translate_file

    return translate_file(REPO / "workloads" / f"{workload_id}.py", dtype=dtype).program


def leir(text: str) -> Program:
    """A program from ``.leir`` text (signature, ``---``, body)."""
    return load_program(text)


def interpreter_outputs(program: Program, seed: int = 0) -> dict[str, np.ndarray]:
    from verifier.inputs import make_inputs

    return run(program, make_inputs(program, seed=seed))


def assert_interpreter_agrees(step: AppliedStep, seed: int = 0) -> None:
    """The after-state computes the before-state's outputs: bitwise for E, within 1e-5 rel for N."""
    before, after = interpreter_outputs(step.before, seed), interpreter_outputs(step.after, seed)
    assert before.keys() == after.keys()
    for name in before:
        if step.exactness is Exactness.E:
            assert before[name].tobytes() == after[name].tobytes(), f"{step.strategy}: {name} differs"
        else:
            np.testing.assert_allclose(after[name], before[name], rtol=1e-4, atol=1e-5, equal_nan=True)


def assert_verifies(step: AppliedStep):
    """The TVM kernel of the after-state verifies against the before-state (equal_pass for E); the record."""
    from verifier.verify import verify

    result = verify(step.after, parent=step.before, reference="parent", cache=False)
    wanted = {"equal_pass"} if step.exactness is Exactness.E else {"pass", "equal_pass"}
    assert result.outcome.value in wanted, (step.strategy, result.outcome, result.error, result.notes)
    return result
