"""A curator's uploaded source: checked at once, stored as ``queued``, translated later on a worker.

Translation runs the user's module in a fresh sandbox process and takes seconds, so the request
only does what is instant and safe — the role, a free name, a size limit and a parse of the text (``ast``
runs nothing) — and answers; the ``generate`` queue's worker translates it (``translate_upload``) and
records the outcome on the workload: ``translated`` with its source state, or ``failed`` with one short
line saying why. A failure is a stored outcome, never an exception that escapes the task.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from curation.models import Origin, TranslationStatus, Workload
from curation.services import dispatch
from curation.services.roles import AnyUser, Role, require
from curation.services.translation import TranslationFailure, translate_source
from curation.services.workloads import source_state, store_state

#: The most source text an upload may carry (KernelBench files are a few KB).
MAX_SOURCE_BYTES = 256 * 1024
#: A failure message is cut to this many characters (the page and the API show one line).
MESSAGE_CHARS = 300
NAME_PATTERN = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_./-]{0,199}$")


class UploadRefused(ValueError):
    """The upload cannot be accepted as sent (the message says what to change)."""


class NameTaken(UploadRefused):
    """A workload of that name exists already (an upload never replaces one)."""


def check_name(name: str) -> str:
    """The name, stripped, or ``UploadRefused`` if it is not a usable workload name or is taken."""
    name = name.strip()
    if not NAME_PATTERN.match(name) or ".." in name:
        raise UploadRefused("a name is letters, digits and _ . / - (at most 200), like mine/softmax")
    if Workload.objects.filter(name=name).exists():
        raise NameTaken(f"a workload named {name!r} exists already; choose another name")
    return name


def check_source(source: str) -> None:
    """Refuse, without running it, a text that cannot be a KernelBench-style file.

    ``ast.parse`` only reads the text. It needs a ``class Model`` and a ``get_inputs`` function at the top
    level (``get_init_inputs`` is optional, as it is for the translator).
    """
    if not source.strip():
        raise UploadRefused("the source is empty")
    if len(source.encode("utf-8")) > MAX_SOURCE_BYTES:
        raise UploadRefused(f"the source is over {MAX_SOURCE_BYTES // 1024} KiB")
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        raise UploadRefused(f"not valid Python: {exc.msg} (line {exc.lineno})") from None
    top = {node.name for node in tree.body if isinstance(node, ast.ClassDef | ast.FunctionDef)}
    missing = [what for what, name in (("class Model", "Model"), ("def get_inputs()", "get_inputs"))
               if name not in top]
    if missing:
        raise UploadRefused(f"a KernelBench-style file defines {' and '.join(missing)} at the top level")


def submit_upload(user: AnyUser, *, name: str, source: str, level: int = 1, dtype: str = "f32",
                  origin: str = Origin.UPLOAD, sets: dict[str, Any] | None = None, licence: str = "",
                  provenance: str = "") -> Workload:
    """Store the upload as ``queued`` and queue its translation (on commit); refused at once if unusable."""
    require(user, Role.CURATOR, "uploading a workload")
    name = check_name(name)
    check_source(source)
    try:
        with transaction.atomic():
            workload: Workload = Workload.objects.create(
                name=name, level=level, origin=origin, source=source, dtype=dtype,
                default_shapes=dict(sets or {}), licence=licence,
                provenance=provenance or f"uploaded by {user}", created_by=user,
                translation_status=TranslationStatus.QUEUED, translation_since=timezone.now())
    except IntegrityError:  # the same name sent twice at once: the second loses the unique constraint
        raise NameTaken(f"a workload named {name!r} exists already; choose another name") from None
    dispatch.queue_translation(workload.pk)
    return workload


def short_message(reason: str) -> str:
    """One line of a failure reason: temporary paths dropped, cut to ``MESSAGE_CHARS``."""
    lines = [line.strip() for line in reason.splitlines() if line.strip()]
    line = lines[0] if lines else "failed without a message"
    line = re.sub(r"/\S*/steptp-upload-[^/\s]+/", "", line)
    return line if len(line) <= MESSAGE_CHARS else line[: MESSAGE_CHARS - 1] + "…"


def translate_upload(workload_pk: int) -> Workload | None:
    """The worker's side: translate in the sandbox and record ``translated`` or ``failed`` (idempotent;
    ``None`` when the workload was deleted before its turn came)."""
    workload: Workload | None = Workload.objects.filter(pk=workload_pk).first()
    if workload is None:
        return None
    if workload.translation_status == TranslationStatus.TRANSLATED and source_state(workload) is not None:
        return workload  # a redelivered message
    # the time tells a translation a lost worker left behind (``stalls``) from one still running
    Workload.objects.filter(pk=workload.pk).update(translation_status=TranslationStatus.TRANSLATING,
                                                   translation_since=timezone.now())
    try:
        program = translate_source(workload.source, name=workload.name.split("/")[-1], dtype=workload.dtype,
                                   sets=workload.default_shapes or None)
    except Exception as exc:  # the sandbox itself failing is the upload's outcome too, not a worker crash
        program = TranslationFailure(f"{type(exc).__name__}: {exc}")
    if not isinstance(program, TranslationFailure):
        try:
            with transaction.atomic():
                store_state(workload, program)
        except Exception as exc:  # a program the store refuses is a failed translation as well
            program = TranslationFailure(f"{type(exc).__name__}: {exc}")
    if isinstance(program, TranslationFailure):
        workload.translation_status = TranslationStatus.FAILED
        workload.translation_error = short_message(program.reason)
    else:
        workload.translation_status = TranslationStatus.TRANSLATED
        workload.translation_error = ""
    workload.translation_since = timezone.now()
    workload.save(update_fields=["translation_status", "translation_error", "translation_since"])
    return workload
