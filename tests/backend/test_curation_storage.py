"""The database itself refuses what would corrupt the dataset, whatever code path writes."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, transaction

from curation.models import ProgramState, Step, Verification
from curation.services import workloads

from .fixtures import builtin, engine_step

pytestmark = pytest.mark.django_db


def test_builtin_import_is_idempotent_and_stores_the_translated_source_state():
    first = workloads.import_builtin(names=["level1/softmax", "level1/relu"])
    again = workloads.import_builtin(names=["level1/softmax", "level1/relu"])
    assert sorted(first.created) == ["level1/relu", "level1/softmax"]
    assert sorted(again.unchanged) == ["level1/relu", "level1/softmax"] and not again.created
    state = workloads.source_state(builtin("level1/softmax"))
    assert state.depth == 0 and state.leir.startswith("B^{") and len(state.program_hash) == 64
    assert ProgramState.objects.count() == 2


def test_one_state_per_content_hash_within_a_workload():
    workload = builtin()
    state = workloads.source_state(workload)
    with pytest.raises(IntegrityError), transaction.atomic():
        ProgramState.objects.create(workload=workload, program_hash=state.program_hash, tensors=state.tensors,
                                    leir=state.leir)


@pytest.mark.parametrize("field, value", [("review_status", "approved-ish"), ("verification_status", "ok"),
                                          ("exactness", "X")])
def test_status_values_are_checked_by_the_database(field, value):
    step = engine_step(builtin())
    with pytest.raises(IntegrityError), transaction.atomic():
        Step.objects.filter(pk=step.pk).update(**{field: value})


def test_one_verification_per_state_parent_target_seed_and_toolchain():
    step = engine_step(builtin())
    key = dict(state=step.after, parent=step.before, target="llvm", seed=0, toolchain="tvm=0.27")
    Verification.objects.create(outcome="equal_pass", **key)
    with pytest.raises(IntegrityError), transaction.atomic():
        Verification.objects.create(outcome="fail", **key)
    with pytest.raises(IntegrityError), transaction.atomic():
        Verification.objects.create(state=step.after, target="cuda", toolchain="x", outcome="looks fine")
