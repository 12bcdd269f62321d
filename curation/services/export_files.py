"""Writing an export's row files — JSON lines and parquet shards — fast and byte-stable.

A row's JSON line is ``_dump({**row(prompt, answer, config), "meta": meta})`` (``meta`` is
``dataset.rendering.row_meta`` of the answered record). Encoding that dict per row re-escapes the
shared system text and a prompt that tens of thousands of rows repeat, so the line is instead cut once per
format into the constant pieces around where the prompt, the answer and the meta object go, and each row
joins those pieces with its escaped texts (a prompt escaped once) and its meta's JSON. JSON string
escaping works character by character, so
escaping the pieces and joining them is the same as escaping the whole; the first row of every file is
still encoded the plain way and compared, so a ``row`` that ever stops embedding its texts verbatim fails
loudly instead of writing different bytes.

Parquet tables are built column-wise (``pyarrow.Table.from_pylist`` over nested dicts was most of the
time); the arrays hold the same values with the same types, so the shards are the same bytes.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from json.encoder import encode_basestring
from pathlib import Path
from typing import Any

_PROMPT_MARK = "\x00prompt\x00"
_ANSWER_MARK = "\x00answer\x00"
_META_MARK = "\x00meta\x00"


class RowLayoutChanged(RuntimeError):
    """``row`` no longer embeds the prompt and answer verbatim, so the fast line writer cannot be used."""


def _dump(row: Mapping[str, Any]) -> str:
    return json.dumps(row, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _escaped(text: str) -> str:
    """``text`` as it appears between the quotes of a JSON string (``ensure_ascii=False``)."""
    return encode_basestring(text)[1:-1]


def _line_pieces(config: str) -> tuple[list[str], list[int]]:
    """The JSON line of a ``config`` row cut around its prompt (slot 0), answer (1) and meta (2): the four
    constant pieces, and the slots in the order they appear between them."""
    from dataset.rendering import row

    line = _dump({**row(_PROMPT_MARK, _ANSWER_MARK, config), "meta": _META_MARK})
    marks = [_escaped(_PROMPT_MARK), _escaped(_ANSWER_MARK), f'"{_escaped(_META_MARK)}"']
    if any(line.count(mark) != 1 for mark in marks):
        raise RowLayoutChanged(f"a {config} row does not hold its prompt, answer and meta once each")
    order = sorted(range(3), key=lambda slot: line.index(marks[slot]))
    pieces = []
    rest = line
    for slot in order:
        head, rest = rest.split(marks[slot])
        pieces.append(head)
    pieces.append(rest + "\n")
    return pieces, order


def escape_texts(texts: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """(prompt, answer) pairs escaped for JSON; a prompt shared by many rows is escaped once."""
    prompts: dict[str, str] = {}
    out = []
    for prompt, answer in texts:
        escaped = prompts.get(prompt)
        if escaped is None:
            escaped = prompts[prompt] = _escaped(prompt)
        out.append((escaped, _escaped(answer)))
    return out


def write_jsonl(
    path: Path,
    texts: Sequence[tuple[str, str]],
    escaped: Sequence[tuple[str, str]],
    config: str,
    metas: Sequence[Mapping[str, Any]],
) -> int:
    """Write one ``config`` row per (prompt, answer) of ``texts`` (``escaped`` is ``escape_texts(texts)``)
    with its ``meta`` (``metas``, one per row)."""
    from dataset.rendering import row

    if len(metas) != len(texts):
        raise ValueError(f"{len(texts)} rows but {len(metas)} meta objects")
    (p0, p1, p2, p3), (a, b, c) = _line_pieces(config)
    lines = []
    for (prompt, answer), meta in zip(escaped, metas, strict=True):
        slots = (prompt, answer, _dump(meta))
        lines.append(f"{p0}{slots[a]}{p1}{slots[b]}{p2}{slots[c]}{p3}")
    if texts and lines[0] != _dump({**row(*texts[0], config), "meta": metas[0]}) + "\n":
        raise RowLayoutChanged(f"the {config} line of the first row differs from its plain encoding")
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="\n") as handle:
        handle.writelines(lines)
    return len(lines)


#: The arrow type of each ``meta`` field (``dataset.rendering.META_KEYS``).
META_TYPES = {"variant": "int64", "speedup": "float64", "measured": "bool"}


def parquet_schema(config: str) -> Any:
    """The shard schema of a ``config``: its message-list columns (a list of {content, role}) and ``meta``."""
    import pyarrow as pa

    from dataset.rendering import META_KEYS

    turn = pa.list_(pa.struct([("content", pa.string()), ("role", pa.string())]))
    meta = pa.struct([(key, pa.type_for_alias(META_TYPES.get(key, "string"))) for key in META_KEYS])
    columns = ["messages"] if config == "messages" else ["prompt", "completion"]
    return pa.schema([*((name, turn) for name in columns), ("meta", meta)])


def _turns_column(rows: Sequence[Mapping[str, Any]], key: str, kind: Any) -> Any:
    import pyarrow as pa

    offsets = [0]
    contents: list[str] = []
    roles: list[str] = []
    for r in rows:
        turns = r[key]
        contents += [t["content"] for t in turns]
        roles += [t["role"] for t in turns]
        offsets.append(offsets[-1] + len(turns))
    values = pa.StructArray.from_arrays(
        [pa.array(contents, pa.string()), pa.array(roles, pa.string())], fields=list(kind.value_type)
    )
    return pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), values, type=kind)


def write_parquet(
    path: Path, rows: Sequence[Mapping[str, Any]], config: str, metas: Sequence[Mapping[str, Any]]
) -> None:
    """One zstd parquet shard of ``rows`` (message-list columns) with their ``metas`` as a struct column."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = parquet_schema(config)
    columns = [_turns_column(rows, field.name, field.type) for field in list(schema)[:-1]]
    meta_type = schema.field("meta").type
    meta = pa.StructArray.from_arrays(
        [pa.array([m[f.name] for m in metas], f.type) for f in meta_type], fields=list(meta_type)
    )
    table = pa.Table.from_arrays([*columns, meta], schema=schema)
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path, compression="zstd", write_statistics=False, store_schema=False)


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
