"""Real rows for the curation tests: users with roles, a workload with a real translated state, steps.

Steps are made by the real strategy engine on the real frontend's translation of a built-in workload, so
the stored LEIR is what production stores.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model

from curation.models import Step, VerificationStatus, Workload
from curation.services import workloads
from curation.services.roles import Role, grant


def user(name: str, role: Role):
    account = get_user_model().objects.create_user(name, password="pw-" + name)
    grant(account, role)
    return account


def builtin(name: str = "level1/layer_norm") -> Workload:
    workloads.import_builtin(names=[name])
    return Workload.objects.get(name=name)


def engine_step(workload: Workload, *, strategy: str = "loop_unrolling", site: int = 0,
                verified: str = VerificationStatus.EQUAL_PASS) -> Step:
    """A step the engine really produced from the workload's source state."""
    from leir.program import program_from_json, program_to_json
    from strategies import apply_strategy

    source = workloads.source_state(workload)
    applied = apply_strategy(program_from_json(source.as_program_json()), strategy, site)
    after, _ = workloads.store_state(workload, program_to_json(applied.after), parent=source, depth=1)
    return Step.objects.create(
        step_id=f"{source.program_hash[:16]}-{strategy}-{site}", workload=workload, before=source, after=after,
        strategy=strategy, number=applied.number, level=applied.level.value, site=applied.site.to_json(),
        params=dict(applied.params), exactness=applied.exactness.value, trace=applied.trace.to_json(),
        trace_text=applied.trace.render(), verification_status=verified)
