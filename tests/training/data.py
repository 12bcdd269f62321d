"""Step records the training tests share: the golden seeded generation (our pipeline's output), marked
verified the way tests/pipeline/test_golden.py marks it (no TVM build needed), with two attempts marked
failed so preference pairs have every kind of rejected answer."""

from __future__ import annotations

import json
from pathlib import Path

GOLDEN_STEPS = Path(__file__).parent.parent / "pipeline" / "golden" / "steps.jsonl"


def _verification(exactness: str) -> dict:
    equal = exactness == "E"
    return {"required": "equal_pass" if equal else "pass", "accepted": True,
            "outcome": "equal_pass" if equal else "pass", "equal_pass": equal, "max_abs_error": 0.0,
            "max_rel_error": 0.0, "tolerances": {}, "seconds": 1.0, "versions": {"tvm": "test"},
            "unhonoured_loops": [], "result": {"outcome": "equal_pass" if equal else "pass"}}


def steps_file(path: Path, *, failed: int = 2) -> Path:
    """The golden records, verified, the last ``failed`` slower ones marked failed verification."""
    records = [json.loads(line) for line in GOLDEN_STEPS.read_text().splitlines()]
    slower = [r for r in records if r["effect"]["verdict"] == "slower"][-failed:] if failed else []
    for record in records:
        if any(record is s for s in slower):
            record["status"] = "failed"
            record["verification"] = None
            record["failure"] = {"stage": "verification", "kind": "fail",
                                 "reason": "outputs differ from the parent: max abs error 3.1e-01"}
        else:
            record["status"] = "verified"
            record["verification"] = _verification(record["exactness"])
    path.write_text("".join(json.dumps(r, sort_keys=True, separators=(",", ":")) + "\n" for r in records))
    return path
