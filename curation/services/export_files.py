"""Writing an export's row files — JSON lines and parquet shards — fast and byte-stable.

A row's JSON line is ``_dump(row(prompt, answer, config))``. Encoding that dict per row re-escapes the
shared system text and a prompt that tens of thousands of rows repeat, so the line is instead cut once per
format into the constant pieces around where the prompt and the answer go, and each row joins those pieces
with its escaped texts (a prompt escaped once). JSON string escaping works character by character, so
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


class RowLayoutChanged(RuntimeError):
    """``row`` no longer embeds the prompt and answer verbatim, so the fast line writer cannot be used."""


def _dump(row: Mapping[str, Any]) -> str:
    return json.dumps(row, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _escaped(text: str) -> str:
    """``text`` as it appears between the quotes of a JSON string (``ensure_ascii=False``)."""
    return encode_basestring(text)[1:-1]


def _line_pieces(config: str) -> tuple[str, str, str, bool]:
    """The JSON line of a ``config`` row cut around its two texts: (head, middle, tail, prompt first?)."""
    from dataset.rendering import row

    line = _dump(row(_PROMPT_MARK, _ANSWER_MARK, config))
    prompt, answer = _escaped(_PROMPT_MARK), _escaped(_ANSWER_MARK)
    if line.count(prompt) != 1 or line.count(answer) != 1:
        raise RowLayoutChanged(f"a {config} row does not hold its prompt and its answer once each")
    prompt_first = line.index(prompt) < line.index(answer)
    first, second = (prompt, answer) if prompt_first else (answer, prompt)
    head, rest = line.split(first)
    middle, tail = rest.split(second)
    return head, middle, tail + "\n", prompt_first


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
    path: Path, texts: Sequence[tuple[str, str]], escaped: Sequence[tuple[str, str]], config: str
) -> int:
    """Write one ``config`` row per (prompt, answer) of ``texts`` (``escaped`` is ``escape_texts(texts)``)."""
    from dataset.rendering import row

    head, middle, tail, prompt_first = _line_pieces(config)
    if prompt_first:
        lines = [f"{head}{prompt}{middle}{answer}{tail}" for prompt, answer in escaped]
    else:
        lines = [f"{head}{answer}{middle}{prompt}{tail}" for prompt, answer in escaped]
    if texts and lines[0] != _dump(row(*texts[0], config)) + "\n":
        raise RowLayoutChanged(f"the {config} line of the first row differs from its plain encoding")
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="\n") as handle:
        handle.writelines(lines)
    return len(lines)


def write_parquet(path: Path, rows: Sequence[Mapping[str, Any]], config: str) -> None:
    """One zstd parquet shard of ``rows``: ``messages`` a list of {content, role}, else prompt, completion."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if config == "messages":
        turn = pa.struct([("content", pa.string()), ("role", pa.string())])
        offsets = [0]
        contents: list[str] = []
        roles: list[str] = []
        for r in rows:
            turns = r["messages"]
            contents += [t["content"] for t in turns]
            roles += [t["role"] for t in turns]
            offsets.append(offsets[-1] + len(turns))
        values = pa.StructArray.from_arrays(
            [pa.array(contents, pa.string()), pa.array(roles, pa.string())], fields=list(turn)
        )
        column = pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), values, type=pa.list_(turn))
        table = pa.Table.from_arrays([column], schema=pa.schema([("messages", pa.list_(turn))]))
    else:
        table = pa.Table.from_arrays(
            [pa.array([r[key] for r in rows], pa.string()) for key in ("prompt", "completion")],
            schema=pa.schema([("prompt", pa.string()), ("completion", pa.string())]),
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path, compression="zstd", write_statistics=False, store_schema=False)


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
