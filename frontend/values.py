"""Writing parameter values as ``.npz`` byte-for-byte reproducibly.

``numpy.savez`` stamps each zip member with the current time, so two translations of the same file
would differ; the dataset promises byte-identical outputs for identical inputs, hence this writer with a
fixed timestamp and sorted keys.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Mapping
from pathlib import Path

import numpy as np

_EPOCH = (1980, 1, 1, 0, 0, 0)


def npz_bytes(values: Mapping[str, np.ndarray]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_STORED) as archive:
        for name in sorted(values):
            member = io.BytesIO()
            # np.ascontiguousarray would turn a 0-d parameter into shape (1,); np.require keeps it 0-d
            np.lib.format.write_array(member, np.require(values[name], requirements="C"), allow_pickle=False)
            info = zipfile.ZipInfo(f"{name}.npy", date_time=_EPOCH)
            info.external_attr = 0o644 << 16
            archive.writestr(info, member.getvalue())
    return buffer.getvalue()


def save_npz(path: str | Path, values: Mapping[str, np.ndarray]) -> None:
    """``np.load``-compatible archive of ``values`` (keys = LEIR names), identical for identical values."""
    Path(path).write_bytes(npz_bytes(values))
