"""The start-a-run form: a stored workload that translated, the algorithm, the policy and the budget."""

from __future__ import annotations

from typing import Any

from django import forms

from curation.models import Workload
from curation.services.tuning import (
    POLICIES,
    TARGET_LABELS,
    TUNING_TARGET,
    algorithm_names,
    available_policies,
)


class RunForm(forms.Form):
    workload = forms.ModelChoiceField(queryset=Workload.objects.none(), to_field_name="name")
    algorithm = forms.ChoiceField(initial="beam")
    policy = forms.ChoiceField(choices=list(POLICIES.items()), initial="rule")
    verifications = forms.IntegerField(min_value=1, max_value=100_000, initial=20, required=False,
                                       label="Verifications")
    policy_calls = forms.IntegerField(min_value=1, max_value=100_000, required=False, label="Policy calls")
    seconds = forms.FloatField(min_value=1, max_value=86_400, required=False, label="Wall seconds")
    seed = forms.IntegerField(min_value=0, max_value=2**31 - 1, initial=0)
    #: The tuner builds for the worker's own CPU unless asked for baseline x86-64 (``verifier.targets``).
    target = forms.ChoiceField(choices=list(TARGET_LABELS.items()), initial=TUNING_TARGET)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["workload"].queryset = (Workload.objects.filter(states__depth=0).distinct()
                                            .order_by("name"))
        self.fields["algorithm"].choices = [(name, name) for name in algorithm_names()]
        self.fields["policy"].choices = list(available_policies().items())

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if not any(data.get(k) for k in ("verifications", "policy_calls", "seconds")):
            raise forms.ValidationError("give at least one budget: verifications, policy calls or seconds")
        return data

    def run_options(self) -> dict[str, Any]:
        """The validated form as ``create_trajectory`` arguments."""
        data = self.cleaned_data
        budget = {k: data[k] for k in ("verifications", "policy_calls", "seconds") if data.get(k)}
        return {"workload": data["workload"], "algorithm": data["algorithm"], "policy": data["policy"],
                "budget": budget, "seed": data["seed"], "target": data["target"]}
