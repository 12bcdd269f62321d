"""Held-out sweep: translate and verify every KernelBench-style file of some folders against PyTorch eager.

Usage: ``python bench/heldout.py DIR [DIR ...] [--timeout S] [--jobs N] [--json OUT] [--match TEXT]``.

Each ``DIR`` is one level (its name labels the totals). For every ``*.py`` file in it (``Model``,
``get_inputs``, ``get_init_inputs``), a child process:

1. shrinks the problem so a CPU can run it: every module-level int constant >= 64 (and every such
   entry of a module-level int tuple, and every such literal size inside ``get_inputs()``, through
   ``--input-shape``) is halved while it stays even and above the attempt's limit (32; retries 16
   and 8, which also shrink sizes above the limit; a last retry divides every size >= 8 by one power
   of two, keeping relations between sizes),
   which keeps the power-of-two divisibility models rely on (channels by groups, heads by dims);
   an odd size still above the limit becomes ``limit - 1``. The overrides go through the same
   ``--set`` machinery as ``steptp translate``/``steptp verify`` (``frontend.loading``);
2. translates the file with the real frontend (``translate_file``) and verifies the program with
   ``verifier.verify`` against ``TorchSourceReference`` (the ``steptp verify --source`` path), no cache;
3. on any failure other than an unsupported operator, retries with the next, smaller limit (then the
   exact retry: every size divided by the power of two they all share, keeping divisibility); when every
   shrunk attempt failed to *translate* (a model whose hard-coded widths need the full image),
   one more attempt keeps the constants as written and each input at its written size, batch of one.
   A size written inside ``get_inputs()`` is found in the creating call also where the file wraps it
   (``torch.rand(n, 1) > 0.5``, ``torch.rand(n, m) * scale``, ``(torch.rand(n, m) * s).softmax(-1)``).

Files run at most ``--jobs`` (default 2) at a time in long-lived worker children (imports stay warm),
each under ``--timeout`` seconds in all (past it the worker is killed and restarted). One line
per file (translated, verified, outcome, the sizes used and their class — ``shrunk``, ``full`` when
nothing needed shrinking, ``full, batch 1`` for the last attempt —, error class and message), then
totals per level with the verified files split by that class, the files verified at full size listed
apart, and the failures grouped by family (error class + operator or first words of the message).
The held-out files themselves stay outside the repository: public code is not ours to commit.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import json
import os
import queue
import re
import select
import signal
import subprocess
import sys
import time
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

#: Attempts in order: limit -> the smallest size that is shrunk. The first keeps every size under 64 as
#: written (kernel sizes, small channel counts); a retry also brings mid sizes down (a 3-D transposed
#: convolution of 16x32x32 is already too heavy at 32 channels).
#: The last attempt, ``UNIFORM``, divides every size >= UNIFORM_FLOOR by one power of two instead of
#: clamping each: it keeps the relations between sizes a model relies on (a LayerNorm over
#: ``out_channels`` applied to a last dimension that a stride-2 transposed convolution makes equal to it).
UNIFORM = 0
UNIFORM_FLOOR = 8
#: Then ``EXACT``: every size >= 64 divided by the largest power of two that divides all of them (at
#: most the uniform factor; smaller sizes as written), so each keeps its odd part and its divisibility:
#: ``assert out_channels % 4 == 0`` with ``groups = 3`` (ShuffleNet: 240 and 480 channels, 480 // 16 = 30
#: under the uniform retry) survives.
EXACT = -2
LIMITS = {32: 64, 16: 17, 8: 9, UNIFORM: UNIFORM_FLOOR, EXACT: 64}
#: One more attempt when every shrunk one failed to translate: the constants as written and each input
#: at its written size with a batch of one. Whole models that flatten into a hard-coded width
#: (``nn.Linear(256 * 6 * 6, 4096)``) or pool by a fixed window (``nn.AvgPool2d(7)``) need the full image.
FULL_INPUTS = -1
MIN_SHRINK = LIMITS[32]
#: Share of ``--timeout`` a first attempt may use, so a retry at a smaller size still has time.
FIRST_SHARE = 0.4
#: Longest a worker child may take to start and warm up before its first file.
WARM_UP_S = 600.0


def shrink_int(value: int, limit: int, factor: int = 1) -> int:
    """``value`` brought to at most ``limit`` by halving (keeps powers of two); odd leftovers -> limit-1.

    For the ``UNIFORM`` attempt: ``value // factor`` (exact for the powers of two that sizes mostly are).
    """
    if value < LIMITS.get(limit, MIN_SHRINK):
        return value
    if limit in (UNIFORM, EXACT):
        return max(value // factor, 1)
    while value > limit and value % 2 == 0:
        value //= 2
    return value if value <= limit else limit - 1


def _is_size(value: Any) -> bool:
    """An int, or a non-empty tuple or list of ints (bools are not sizes).

    Lists count: whole models take their layer widths as one (``layer_sizes = [16384, 16384]``,
    ``block_widths = [64, 128, 256]``), and a list left at paper scale is gigabytes of weights.
    """
    if isinstance(value, tuple | list):
        return bool(value) and all(_is_size(v) and not isinstance(v, tuple | list) for v in value)
    return isinstance(value, int) and not isinstance(value, bool)


def module_constants(source: str) -> dict[str, Any]:
    """Top-level bindings whose value is an int or a tuple/list of ints, evaluated in order.

    ``M = 1024 * 2``, ``height = width = 128`` and ``depth, height, width = 16, 32, 32`` are all read
    (the forms ``frontend.loading.override`` can override); expressions are evaluated with the
    earlier constants only (no builtins), so a file's own arithmetic is honoured and nothing else runs.
    """
    env: dict[str, Any] = {}
    try:
        body = ast.parse(source).body
    except SyntaxError:  # the file itself does not parse: nothing to shrink, translation says why
        return env
    for node in body:
        if not isinstance(node, ast.Assign):
            continue
        try:
            value = eval(compile(ast.Expression(node.value), "<const>", "eval"),
                         {"__builtins__": {}}, dict(env))
        except Exception:
            continue
        for target in node.targets:
            if isinstance(target, ast.Name) and _is_size(value):
                env[target.id] = value
            elif (isinstance(target, ast.Tuple) and all(isinstance(e, ast.Name) for e in target.elts)
                  and isinstance(value, tuple) and len(value) == len(target.elts)):
                env.update({e.id: v for e, v in zip(target.elts, value, strict=True) if _is_size(v)})
    return env


def _input_literals(source: str) -> list[int]:
    """Sizes written as int literals in the creating calls of ``get_inputs()``'s entries
    (``torch.rand(128, 8192)``): a file without module-level sizes has its sizes only there."""
    from frontend.loading import _factory_call

    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    func = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "get_inputs"), None)
    if func is None:
        return []
    out = []
    for node in ast.walk(func):
        call = _factory_call(node) if isinstance(node, ast.Call) else None
        if call is None or call is not node:
            continue
        sized = next((kw.value for kw in call.keywords if kw.arg == "size"), None)
        sized = sized or next((a for a in call.args if isinstance(a, ast.Tuple | ast.List)), None)
        nodes = sized.elts if sized is not None else call.args
        out.extend(n.value for n in nodes if isinstance(n, ast.Constant) and type(n.value) is int)
    return out


def uniform_factor(source: str, target: int = 32) -> int:
    """The power of two that brings the file's largest size (module-level, or written in ``get_inputs()``)
    to at most ``target``."""
    sizes = [v for value in module_constants(source).values()
             for v in (value if isinstance(value, tuple | list) else (value,))] + _input_literals(source)
    biggest, factor = max(sizes, default=1), 1
    while biggest // factor > target:
        factor *= 2
    return factor


def exact_factor(source: str) -> int:
    """The largest power of two dividing every module-level size >= 64, capped by ``uniform_factor``:
    dividing by it is exact for every such size."""
    sizes = [v for value in module_constants(source).values()
             for v in (value if isinstance(value, tuple | list) else (value,)) if v >= LIMITS[EXACT]]
    sizes += [v for v in _input_literals(source) if v >= LIMITS[EXACT]]
    cap, factor = uniform_factor(source), 1
    while factor < cap and all(v % (factor * 2) == 0 for v in sizes):
        factor *= 2
    return factor


def _factor(source: str, limit: int) -> int:
    return uniform_factor(source) if limit == UNIFORM else exact_factor(source) if limit == EXACT else 1


def shrunk_sets(source: str, limit: int) -> dict[str, Any]:
    """The ``--set`` overrides that bring the file's large constants under ``limit`` (or ``UNIFORM``)."""
    if limit == FULL_INPUTS:
        return {}
    factor = _factor(source, limit)
    sets: dict[str, Any] = {}
    for name, value in module_constants(source).items():
        new = (shrink_int(value, limit, factor) if isinstance(value, int)
               else type(value)(shrink_int(v, limit, factor) for v in value))
        if new != value:
            sets[name] = new
    return sets


def shrunk_input_shapes(source: str, limit: int) -> dict[int, tuple[int, ...]]:
    """``--input-shape`` resizes for ``get_inputs()`` entries whose sizes are written there as literals.

    ``torch.rand(batch_size, 3, 224, 224)``: every size is computed from the file's own constants and
    shrunk as ``shrunk_sets`` shrinks them (so ``batch_size`` agrees with its ``--set``) and the literal
    224s come down too; an entry whose sizes are not all computable is left alone.
    """
    from frontend.loading import _factory_call  # the same call ``--input-shape`` rewrites

    try:
        tree = ast.parse(source)
    except SyntaxError:
        return {}
    func = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "get_inputs"), None)
    returned = next((n.value for n in ast.walk(func) if isinstance(n, ast.Return)), None) if func else None
    if not isinstance(returned, ast.List | ast.Tuple):
        return {}
    env = module_constants(source)
    factor = _factor(source, limit)
    assigned = {t.id: n.value for n in ast.walk(func) if isinstance(n, ast.Assign)
                for t in n.targets if isinstance(t, ast.Name)}
    shapes: dict[int, tuple[int, ...]] = {}
    for index, entry in enumerate(returned.elts):
        if isinstance(entry, ast.Name) and entry.id in assigned:
            entry = assigned[entry.id]
        call = _factory_call(entry)
        if call is None:
            continue
        sized = next((kw.value for kw in call.keywords if kw.arg == "size"), None)
        sized = sized or next((a for a in call.args if isinstance(a, ast.Tuple | ast.List)), None)
        nodes = sized.elts if sized is not None else call.args
        floor = LIMITS.get(limit, MIN_SHRINK)
        literal_large = any(isinstance(n, ast.Constant) and isinstance(n.value, int) and n.value >= floor
                            for n in nodes)
        if limit != FULL_INPUTS and not literal_large:
            continue
        try:
            sizes = [eval(compile(ast.Expression(n), "<size>", "eval"),
                          {"__builtins__": {}}, dict(env)) for n in nodes]
        except Exception:
            continue
        if not all(isinstance(v, int) for v in sizes):
            continue
        if limit == FULL_INPUTS:
            if len(sizes) > 1 and sizes[0] > 1:
                shapes[index] = (1, *sizes[1:])
        elif (new := tuple(shrink_int(v, limit, factor) for v in sizes)) != tuple(sizes):
            shapes[index] = new  # only real resizes: a row without any ran at the written sizes
    return shapes


def size_class(row: dict[str, Any]) -> str:
    """How big the attempt that decided ``row`` ran: ``shrunk``, ``full`` (every size as the file writes
    it: nothing needed shrinking) or ``full, batch 1`` (the ``FULL_INPUTS`` attempt: constants as written,
    each input at its written size with a batch of one). A pass at full size says more than a shrunk one
    (long reductions, real tolerances), and a file that only passes there is not a shrinking success."""
    if row.get("limit") == FULL_INPUTS:
        return "full, batch 1" if row.get("input_shapes") else "full"
    return "shrunk" if row.get("sets") or row.get("input_shapes") else "full"


def shrunk_index_bounds(source: str, limit: int) -> str:
    """``source`` with the literal upper bounds of ``torch.randint(low, high, size)`` inside ``get_inputs()``
    shrunk like sizes (``randint(0, 8192, (128, 4096))`` → ``randint(0, 32, ...)`` at 32): such a bound is
    the size of the dimension the values index, which shrinks too, and an index left at 8191 makes the
    traced ``gather`` fail. ``--input-shape`` rewrites sizes only, so this is a rewrite of the file's text.
    The source as it was when there is nothing to change (or it does not parse)."""
    if limit == FULL_INPUTS:
        return source
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return source
    func = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "get_inputs"), None)
    factor, changed = _factor(source, limit), False
    for node in ast.walk(func) if func is not None else ():
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "randint" and len(node.args) >= 3
                and isinstance(node.args[1], ast.Constant) and type(node.args[1].value) is int):
            new = shrink_int(node.args[1].value, limit, factor)
            if new != node.args[1].value:
                node.args[1] = ast.Constant(new)
                changed = True
    return ast.unparse(tree) + "\n" if changed else source


def _family(error_class: str, message: str) -> str:
    """A failure's family: the operator for unsupported operators, else the class + first words."""
    match = re.search(r"unsupported operator (\S+)", message)
    if match:
        return f"{error_class}: {match.group(1).rstrip(':,.')}"
    words = re.sub(r"\S*[/\\]\S*|\d+(\.\d+)?(e-?\d+)?", "#", message).split()[:6]
    return f"{error_class}: {' '.join(words)}"


def run_one(path: Path, limit: int, timeout: float) -> dict[str, Any]:
    """Translate and verify ``path`` shrunk to ``limit`` (in this process)."""
    source = path.read_text(encoding="utf-8")
    sets = shrunk_sets(source, limit)
    shapes = shrunk_input_shapes(source, limit)
    row: dict[str, Any] = {"sets": sets, "input_shapes": shapes, "limit": limit, "translated": False,
                           "verified": False}
    rewritten = shrunk_index_bounds(source, limit)
    if rewritten != source:  # the shrunk copy is translated and is the reference (outside the repo)
        import tempfile

        with tempfile.TemporaryDirectory() as folder:
            copy = Path(folder) / path.name
            copy.write_text(rewritten, encoding="utf-8")
            row["index_bounds_shrunk"] = True
            return _translate_and_verify(copy, sets, shapes, timeout, row)
    return _translate_and_verify(path, sets, shapes, timeout, row)


def _translate_and_verify(path: Path, sets: dict[str, Any], shapes: dict[int, tuple[int, ...]],
                          timeout: float, row: dict[str, Any]) -> dict[str, Any]:
    from frontend import translate_file
    from leir.errors import LeirError
    from steptp_cli.verifier_commands import source_dtype
    from verifier.reference import TorchSourceReference
    from verifier.verify import verify

    try:
        translation = translate_file(path, sets=sets, input_shapes=shapes)
    except LeirError as exc:
        row.update(outcome="translate_error", error_class=type(exc).__name__, error=str(exc))
        return row
    except Exception as exc:
        row.update(outcome="translate_crash", error_class=type(exc).__name__, error=str(exc))
        return row
    row["translated"] = True
    reference = TorchSourceReference(path, sets, source_dtype(translation.program), shapes)
    result = verify(translation.program, reference=reference, params=translation.values, cache=False,
                    timeout=timeout)
    row["outcome"] = result.outcome.value
    row["verified"] = result.outcome.value in ("pass", "equal_pass")
    if not row["verified"]:
        row["error_class"] = result.error_class or result.outcome.value
        row["error"] = (result.error or "; ".join(result.notes)
                        or f"max_abs_error={result.max_abs_error} max_rel_error={result.max_rel_error} "
                           f"tolerance={result.tolerance}")
    row["max_error_ratio"] = result.max_error_ratio
    return row


class _Worker:
    """A long-lived child (``--serve``) that translates and verifies one file per request line.

    Keeps torch, TVM and the verifier's sandbox pool warm between files (a fresh process per file costs
    tens of seconds on a loaded machine); a request past its time is answered by killing the child,
    and the next request starts a new one.
    """

    def __init__(self) -> None:
        self.proc: subprocess.Popen | None = None

    def start(self) -> dict[str, Any] | None:
        """Start and warm up the child unless it runs; the failure row when it did not come up.

        A cold start (imports, the verifier's sandbox pool, a first TVM build) takes a minute or more on
        a loaded machine; it is not the file's time.
        """
        if self.proc is not None and self.proc.poll() is None:
            return None
        # its own session, so that closing it also ends the verifier's sandbox processes it started
        self.proc = subprocess.Popen([sys.executable, __file__, "--serve"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=ROOT,
                                     start_new_session=True)
        ready = self._read_line(WARM_UP_S)
        if (ready or {}).get("ready"):
            return None
        self.close()
        return ready or {"translated": False, "verified": False, "outcome": "crash",
                         "error_class": "WorkerStart", "error": f"no worker within {WARM_UP_S:.0f} s"}

    def ask(self, path: Path, limit: int, seconds: float) -> dict[str, Any] | None:
        """The child's row for ``path`` at ``limit``, or ``None`` when it gave none within ``seconds``."""
        failed = self.start()
        if failed is not None or self.proc is None:
            return failed
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps({"path": str(path), "limit": limit, "timeout": seconds}) + "\n")
        self.proc.stdin.flush()
        answer = self._read_line(seconds)
        if answer is None:
            self.close()
        return answer

    def _read_line(self, seconds: float) -> dict[str, Any] | None:
        """The child's next JSON line within ``seconds`` (``None`` past it; a crash row if it died)."""
        assert self.proc is not None and self.proc.stdout is not None
        deadline = time.monotonic() + seconds
        while True:
            left = deadline - time.monotonic()
            ready = select.select([self.proc.stdout], [], [], max(left, 0))[0] if left > 0 else []
            if not ready:
                return None
            line = self.proc.stdout.readline()
            if not line:  # the child died (a crash of the frontend or of TVM)
                self.close()
                return {"translated": False, "verified": False, "outcome": "crash",
                        "error_class": "ChildCrash", "error": "the worker process died"}
            if line.startswith("{"):
                return json.loads(line)

    def close(self) -> None:
        """Kill the child and everything it started (a killed worker left its sandbox pool computing)."""
        if self.proc is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
            self.proc = None


def run_file(path: Path, timeout: float, worker: _Worker) -> dict[str, Any]:
    """All attempts for one file, within ``timeout`` seconds in all."""
    deadline = time.monotonic() + timeout
    attempts: list[dict[str, Any]] = []
    row: dict[str, Any] = {}
    source = path.read_text(encoding="utf-8")
    limits = [*LIMITS, FULL_INPUTS]
    for number, limit in enumerate(limits):
        if limit == FULL_INPUTS and any(a["outcome"] != "translate_error" for a in attempts):
            break  # the full-size attempt is for models no shrinking could run, not for slow or failing ones
        if limit == EXACT and exact_factor(source) in (1, uniform_factor(source)):
            continue  # nothing exact to divide by, or the same sizes as the uniform attempt
        left = deadline - time.monotonic()
        if left < 10:
            break
        if number < len(LIMITS) - 1:
            left = min(left, max(FIRST_SHARE * timeout, 10))
        failed = worker.start()  # a cold worker warms up first, outside the file's time
        start = time.monotonic()
        answer = failed if failed is not None else worker.ask(path, limit, left)
        row = {"sets": shrunk_sets(path.read_text(encoding="utf-8"), limit), "limit": limit,
               "translated": False, "verified": False, "outcome": "timeout", "error_class": "Timeout",
               "error": f"no result within {int(left)} s"} if answer is None else answer
        row.setdefault("sets", shrunk_sets(path.read_text(encoding="utf-8"), limit))
        row.setdefault("limit", limit)
        row["seconds"] = round(time.monotonic() - start, 1)
        attempts.append({k: row.get(k) for k in ("limit", "outcome", "error_class", "seconds")})
        if row["verified"] or row.get("error_class") == "UnsupportedOperatorError":
            break
    row["attempts"] = attempts
    row["size"] = size_class(row)
    row["file"] = path.name
    row["level"] = path.parent.name
    if not row["verified"]:
        row["family"] = _family(row.get("error_class") or "?", row.get("error") or "")
    return row


_WARM_UP_SOURCE = """import torch


class Model(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.rand(2, 3)]


def get_init_inputs():
    return []
"""


def _warm_up() -> None:
    """Start the verifier's sandbox pool and verify one tiny module of ours against PyTorch, so the
    sandbox worker has torch and the reference loader imported before the first file is timed."""
    import tempfile

    from frontend import translate_file
    from verifier.reference import TorchSourceReference
    from verifier.verify import verify

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "warm_up.py"
        path.write_text(_WARM_UP_SOURCE, encoding="utf-8")
        translation = translate_file(path)
        verify(translation.program, reference=TorchSourceReference(path), params=translation.values,
               cache=False)


def serve() -> int:
    """``--serve``: warm up, say so, then answer ``{"path", "limit", "timeout"}`` lines, a JSON row each."""
    _warm_up()
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        try:
            row = run_one(Path(request["path"]), int(request["limit"]), float(request["timeout"]))
        except Exception as exc:
            row = {"translated": True, "verified": False, "outcome": "crash",
                   "error_class": type(exc).__name__, "error": str(exc)}
        print(json.dumps(row, default=str), flush=True)
    return 0


def _line(row: dict[str, Any]) -> str:
    shapes = row.get("input_shapes") or {}
    sets = " ".join([*(f"{k}={v}" for k, v in row.get("sets", {}).items()),
                     *(f"input{k}={v}" for k, v in shapes.items())]) or "(as written)"
    text = (f"{row['level']}/{row['file']}: translated={'yes' if row['translated'] else 'no'} "
            f"verified={'yes' if row['verified'] else 'no'} outcome={row.get('outcome')} "
            f"[{sets}] size={row.get('size', size_class(row))} {row.get('seconds', 0)}s")
    if len(row.get("attempts", [])) > 1:  # a pass after a failed size is shown, not hidden
        names = {UNIFORM: "uniform", EXACT: "exact", FULL_INPUTS: "full"}
        text += " attempts: " + ", ".join(f"{names.get(a['limit'], a['limit'])}:{a['outcome']}"
                                          for a in row["attempts"])
    if not row["verified"]:
        message = (row.get("error") or "").replace("\n", " ")
        text += f"\n    {row.get('error_class')}: {message[:300]}"
    return text


def summarise(rows: list[dict[str, Any]]) -> str:
    """Totals per level (verified files split by the size they passed at), the files that passed only at
    full size, then failure families with their files."""
    out = ["", "level      tried  translated  verified          shrunk  full  full, batch 1"]
    by_level: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_level[row["level"]].append(row)
    for level, items in sorted(by_level.items()):
        tried, translated = len(items), sum(r["translated"] for r in items)
        verified = sum(r["verified"] for r in items)
        share = 100 * verified / tried
        sizes = Counter(r.get("size", size_class(r)) for r in items if r["verified"])
        out.append(f"{level:<10} {tried:>5}  {translated:>10}  {verified:>8}  ({share:3.0f} %)  "
                   f"{sizes['shrunk']:>6}  {sizes['full']:>4}  {sizes['full, batch 1']:>13}")
    full = [r for r in rows if r["verified"] and r.get("size", size_class(r)) != "shrunk"]
    if full:
        out.append("")
        out.append("verified at full size (not shrunk):")
        out.extend(f"  {r['level']}/{r['file']} ({r.get('size', size_class(r))})" for r in full)
    families = Counter(r["family"] for r in rows if not r["verified"])
    if families:
        out.append("")
        out.append("failure families:")
        for family, count in families.most_common():
            files = ", ".join(f"{r['level']}/{r['file']}" for r in rows if r.get("family") == family)
            out.append(f"  {count:>3}  {family}\n         {files}")
    return "\n".join(out)


def _sort_key(path: Path) -> tuple[int, str]:
    match = re.match(r"(\d+)_", path.name)
    return (int(match.group(1)) if match else 10**9, path.name)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dirs", nargs="*", type=Path,
                        help="folders of KernelBench-style files, one per level")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per file, all attempts (300)")
    parser.add_argument("--jobs", type=int, default=2, choices=(1, 2), help="files at once (at most 2)")
    parser.add_argument("--match", default="", help="only files whose name contains this")
    parser.add_argument("--json", type=Path, metavar="OUT", help="write the table (one row per file) here")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        return serve()
    if not args.dirs:  # ``make bench`` runs every script bare; the held-out files live outside the repo
        print("bench/heldout.py: no folders given (usage: bench/heldout.py DIR [DIR ...]); nothing to sweep")
        return 0
    for folder in args.dirs:
        if not folder.is_dir():
            parser.error(f"not a folder: {folder}")
    files = [p for folder in args.dirs for p in sorted(folder.glob("*.py"), key=_sort_key)
             if args.match in p.name]
    rows: list[dict[str, Any]] = []
    workers = [_Worker() for _ in range(args.jobs)]

    def stop(*_: Any) -> None:
        """``timeout`` (or a user) ending the sweep must not leave the worker children running."""
        for worker in workers:
            worker.close()
        os._exit(143)

    signal.signal(signal.SIGTERM, stop)
    free: queue.Queue[_Worker] = queue.Queue()
    for worker in workers:
        free.put(worker)

    def one(path: Path) -> dict[str, Any]:
        worker = free.get()
        try:
            return run_file(path, args.timeout, worker)
        finally:
            free.put(worker)

    try:
        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            for row in pool.map(one, files):
                print(_line(row), flush=True)
                rows.append(row)
    finally:
        for worker in workers:
            worker.close()
    print(summarise(rows))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1, sort_keys=True, default=str) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
