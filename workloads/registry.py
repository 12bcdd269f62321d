"""Index of the built-in workloads, read from source text so that listing them never imports torch.

Each workload file carries a module-level literal ``STEPTP = {...}`` dict; this module finds it with
:mod:`ast` and evaluates it with :func:`ast.literal_eval`.  Callers that only need names, tags or paper
shapes (the CLI, the web UI, the curation services) thereby stay cheap; :func:`load_module` is the one
function here that executes a workload (and so imports torch).
"""

from __future__ import annotations

import ast
import importlib.util
import re
import sys
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from types import ModuleType
from typing import Any

__all__ = [
    "LEVELS",
    "WorkloadError",
    "WorkloadInfo",
    "get_workload",
    "list_workloads",
    "load_module",
    "read_metadata",
    "shape_constants",
]

#: Directory of the built-in suite (``workloads/``).
ROOT = Path(__file__).resolve().parent
#: The levels that exist, each a sub-directory ``level<N>/``.
LEVELS: tuple[int, ...] = (1, 2, 3)
LICENSE = "Apache-2.0"

_SNAKE = re.compile(r"^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$")
_UPPER = re.compile(r"^[A-Z][A-Z0-9_]*$")
_REQUIRED: dict[str, type | tuple[type, ...]] = {
    "name": str,
    "level": int,
    "tags": list,
    "ops": list,
    "license": str,
    "paper_shapes": dict,
    "description": str,
}
#: Keys a workload may declare but need not: ``size_ranges`` ({NAME: [low, high] or [low, high, step]})
#: bounds the shape variants ``steptp generate --shapes K`` draws (``workloads.variants``).
_OPTIONAL: dict[str, type] = {"size_ranges": dict}


class WorkloadError(ValueError):
    """A workload file whose metadata is missing or malformed, or an unknown workload id."""


@dataclass(frozen=True)
class WorkloadInfo:
    """Metadata of one workload, as declared by its ``STEPTP`` dict (plus where it lives)."""

    name: str
    level: int
    path: Path
    tags: tuple[str, ...]
    ops: tuple[str, ...]
    license: str
    paper_shapes: dict[str, int | float]
    description: str
    #: Default values of the module-level UPPER_CASE constants (what ``--set NAME=VALUE`` overrides).
    default_shapes: dict[str, int | float]
    #: Declared shape-variant ranges, NAME -> (low, high, step); empty when the file declares none.
    size_ranges: dict[str, tuple[int, int, int]] = field(default_factory=dict)

    @property
    def id(self) -> str:
        """Stable identifier ``level<N>/<name>``; also the file path relative to ``workloads/``."""
        return f"level{self.level}/{self.name}"

    def source(self) -> str:
        """The PyTorch source text (what the curation database stores as the workload's program)."""
        return self.path.read_text(encoding="utf-8")

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready metadata (no path: it differs between checkouts) for APIs and fixtures."""
        return {
            "id": self.id,
            "name": self.name,
            "level": self.level,
            "tags": list(self.tags),
            "ops": list(self.ops),
            "license": self.license,
            "paper_shapes": dict(self.paper_shapes),
            "default_shapes": dict(self.default_shapes),
            "description": self.description,
            "size_ranges": {k: list(v) for k, v in self.size_ranges.items()},
        }


def _literal_assignments(tree: ast.Module) -> dict[str, ast.expr]:
    """Top-level ``NAME = <expr>`` (and annotated) assignments of a module, last one wins."""
    found: dict[str, ast.expr] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            found[node.targets[0].id] = node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            found[node.target.id] = node.value
    return found


def shape_constants(source: str) -> dict[str, int | float]:
    """The module-level UPPER_CASE constants that are plain int/float literals, in file order.

    These are the knobs ``steptp translate --set NAME=VALUE`` may override; ``STEPTP`` and constants
    computed from others are not knobs.
    """
    tree = ast.parse(source)
    result: dict[str, int | float] = {}
    for name, value in _literal_assignments(tree).items():
        if not _UPPER.match(name) or name == "STEPTP":
            continue
        try:
            literal = ast.literal_eval(value)
        except ValueError:
            continue
        if isinstance(literal, int | float) and not isinstance(literal, bool):
            result[name] = literal
    return result


def read_metadata(path: Path) -> WorkloadInfo:
    """Parse one workload file's ``STEPTP`` dict without executing the file, validating every field."""
    path = Path(path)
    source = path.read_text(encoding="utf-8")
    try:
        tree = ast.parse(source, filename=str(path))
    except SyntaxError as exc:
        raise WorkloadError(f"{path}: not valid Python: {exc}") from exc
    node = _literal_assignments(tree).get("STEPTP")
    if node is None:
        raise WorkloadError(f"{path}: no module-level STEPTP = {{...}} assignment")
    try:
        meta: Any = ast.literal_eval(node)
    except ValueError as exc:
        raise WorkloadError(f"{path}: STEPTP must be a literal dict: {exc}") from exc
    if not isinstance(meta, dict):
        raise WorkloadError(f"{path}: STEPTP must be a dict")
    for key, kind in _REQUIRED.items():
        if key not in meta:
            raise WorkloadError(f"{path}: STEPTP lacks {key!r}")
        if not isinstance(meta[key], kind) or isinstance(meta[key], bool):
            raise WorkloadError(f"{path}: STEPTP[{key!r}] must be {getattr(kind, '__name__', kind)}")
    for key, kind in _OPTIONAL.items():
        if key in meta and not isinstance(meta[key], kind):
            raise WorkloadError(f"{path}: STEPTP[{key!r}] must be {kind.__name__}")
    unknown = sorted(set(meta) - set(_REQUIRED) - set(_OPTIONAL))
    if unknown:
        raise WorkloadError(f"{path}: STEPTP has unknown keys {unknown}")
    name = meta["name"]
    if name != path.stem or not _SNAKE.match(name):
        raise WorkloadError(f"{path}: name {name!r} must be snake_case and equal the file name")
    if meta["level"] not in LEVELS or path.parent.name != f"level{meta['level']}":
        raise WorkloadError(f"{path}: level {meta['level']} does not match directory {path.parent.name}")
    for key in ("tags", "ops"):
        items = meta[key]
        if not items or not all(isinstance(x, str) and x for x in items) or len(set(items)) != len(items):
            raise WorkloadError(f"{path}: STEPTP[{key!r}] must be a non-empty list of distinct strings")
    if meta["license"] != LICENSE:
        raise WorkloadError(f"{path}: licence must be {LICENSE}")
    if not meta["description"].strip():
        raise WorkloadError(f"{path}: empty description")
    defaults = shape_constants(source)
    paper = meta["paper_shapes"]
    for key, value in paper.items():
        if key not in defaults:
            raise WorkloadError(f"{path}: paper_shapes names {key!r}, which is not a module constant")
        if type(value) is not type(defaults[key]):
            raise WorkloadError(f"{path}: paper_shapes[{key!r}] must have the type of the default")
    ranges = _size_ranges(path, meta.get("size_ranges", {}), defaults)
    return WorkloadInfo(
        name=name,
        level=meta["level"],
        path=path,
        tags=tuple(meta["tags"]),
        ops=tuple(meta["ops"]),
        license=meta["license"],
        paper_shapes=dict(paper),
        description=meta["description"].strip(),
        default_shapes=defaults,
        size_ranges=ranges,
    )


def _size_ranges(path: Path, declared: dict[str, Any],
                 defaults: dict[str, int | float]) -> dict[str, tuple[int, int, int]]:
    """Check ``STEPTP["size_ranges"]``: integer constants, ``[low, high(, step)]``, 1 <= low <= high."""
    ranges: dict[str, tuple[int, int, int]] = {}
    for key, spec in declared.items():
        if not isinstance(defaults.get(key), int):
            raise WorkloadError(f"{path}: size_ranges names {key!r}, which is not an integer module constant")
        if (not isinstance(spec, list | tuple) or len(spec) not in (2, 3)
                or not all(isinstance(v, int) and not isinstance(v, bool) for v in spec)):
            raise WorkloadError(f"{path}: size_ranges[{key!r}] must be [low, high] or [low, high, step]")
        low, high, step = (*spec, 1) if len(spec) == 2 else spec
        if not 1 <= low <= high or step < 1:
            raise WorkloadError(f"{path}: size_ranges[{key!r}] needs 1 <= low <= high and step >= 1")
        ranges[key] = (low, high, step)
    return ranges


@lru_cache(maxsize=4)
def _scan(root: Path) -> tuple[WorkloadInfo, ...]:
    infos: list[WorkloadInfo] = []
    for level in LEVELS:
        for path in sorted((root / f"level{level}").glob("*.py")):
            if path.name.startswith("_"):
                continue
            infos.append(read_metadata(path))
    return tuple(infos)


def list_workloads(level: int | None = None, *, root: Path | None = None) -> list[WorkloadInfo]:
    """All workloads (or those of one level), sorted by level then name — a stable order."""
    if level is not None and level not in LEVELS:
        raise WorkloadError(f"unknown level {level}; levels are {LEVELS}")
    infos = _scan((root or ROOT).resolve())
    return [info for info in infos if level is None or info.level == level]


def source_programs(dtype: str = "f32", *, keep_dead_blocks: bool = False,
                    ids: list[str] | None = None) -> list[tuple[str, Any]]:
    """``(id, program)`` for every workload the frontend translates, in registry order.

    What the site-counting scripts and benches iterate over. A workload the frontend refuses is reported
    on stderr and left out, so one refusal does not hide every other count.
    """
    from frontend import translate_file

    out = []
    for info in list_workloads():
        if ids is not None and info.id not in ids:
            continue
        try:
            out.append((info.id, translate_file(info.path, dtype=dtype,
                                                keep_dead_blocks=keep_dead_blocks).program))
        except Exception as exc:
            print(f"skip {info.id}: {type(exc).__name__}: {exc}", file=sys.stderr)
    return out


def get_workload(workload_id: str, *, root: Path | None = None) -> WorkloadInfo:
    """The workload ``level<N>/<name>``; a bare ``<name>`` works too, names being unique across levels.

    A trailing ``.py`` is tolerated, so a path relative to ``workloads/`` is also an id.
    """
    wanted = workload_id.strip().removesuffix(".py")
    infos = list_workloads(root=root)
    for info in infos:
        if info.id == wanted:
            return info
    if "/" not in wanted:
        named = [info for info in infos if info.name == wanted]
        if len(named) == 1:
            return named[0]
    raise WorkloadError(f"unknown workload {workload_id!r}")


def load_module(workload: WorkloadInfo | str) -> ModuleType:
    """Execute a workload file and return it as a fresh module (this imports torch).

    A fresh module each call, so constants patched by one caller never leak into another.
    """
    info = get_workload(workload) if isinstance(workload, str) else workload
    module_name = f"steptp_workload_{info.level}_{info.name}"
    spec = importlib.util.spec_from_file_location(module_name, info.path)
    if spec is None or spec.loader is None:
        raise WorkloadError(f"cannot load {info.path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def markdown_table(level: int | None = None) -> str:
    """A Markdown table of the suite (id, ops, tags, description) — the list in ``docs/workloads.md``."""
    rows = ["| id | ops | tags | description |", "|---|---|---|---|"]
    for info in list_workloads(level=level):
        cells = [f"`{info.id}`", ", ".join(info.ops), ", ".join(info.tags), info.description]
        rows.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    return "\n".join(rows) + "\n"


def update_docs(text: str) -> str:
    """``text`` with each span between ``<!-- workloads:levelN -->`` and its closing marker regenerated."""
    for level in LEVELS:
        start, end = f"<!-- workloads:level{level} -->", f"<!-- /workloads:level{level} -->"
        head, sep, rest = text.partition(start)
        if not sep:
            raise WorkloadError(f"docs lack the marker {start}")
        _, sep, tail = rest.partition(end)
        if not sep:
            raise WorkloadError(f"docs lack the marker {end}")
        text = f"{head}{start}\n{markdown_table(level)}{end}{tail}"
    return text


def main(argv: list[str] | None = None) -> int:
    """``python -m workloads.registry [--level N] [--markdown | --update-docs FILE]``; never imports torch."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m workloads.registry", description=main.__doc__)
    parser.add_argument("--level", type=int, choices=LEVELS)
    parser.add_argument("--markdown", action="store_true", help="print the docs table")
    parser.add_argument("--update-docs", metavar="FILE", type=Path, help="regenerate the tables in FILE")
    args = parser.parse_args(argv)
    if args.update_docs:
        path: Path = args.update_docs
        path.write_text(update_docs(path.read_text(encoding="utf-8")), encoding="utf-8")
    elif args.markdown:
        print(markdown_table(args.level), end="")
    else:
        for info in list_workloads(args.level):
            shapes = " ".join(f"{k}={v}" for k, v in info.default_shapes.items())
            print(f"{info.id}\t{shapes}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
