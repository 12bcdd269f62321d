"""The export form: what a curator picks (filters, split fractions, formats) → ``create_export`` options.

The choices of levels, strategies and workloads come from the verified steps stored
(``exports.filter_choices``), so the form never offers a filter that selects nothing by construction.
"""

from __future__ import annotations

from typing import Any

from django import forms

from curation.models import Exactness
from curation.services import exports

INCLUDE = (("approved", "approved steps only"),
           ("all_verified", "approved and unreviewed verified steps (no rejected or disputed)"))


class ExportForm(forms.Form):
    name = forms.CharField(max_length=120, initial="steptp-sft")
    include = forms.ChoiceField(choices=INCLUDE, initial="approved", widget=forms.RadioSelect)
    levels = forms.MultipleChoiceField(required=False, widget=forms.CheckboxSelectMultiple)
    strategies = forms.MultipleChoiceField(required=False, widget=forms.SelectMultiple(attrs={"size": 6}))
    workloads = forms.MultipleChoiceField(required=False, widget=forms.SelectMultiple(attrs={"size": 6}))
    exactness = forms.MultipleChoiceField(choices=Exactness.choices, required=False,
                                          widget=forms.CheckboxSelectMultiple)
    policy = forms.ChoiceField(required=False, initial="",
                               choices=(("", "none (every selected step)"),
                                        ("default", "default (STRATEGIES.md caps and sampling)"),
                                        ("all", "all (no sampling, no cap)")))
    train = forms.FloatField(min_value=0, max_value=1, initial=exports.DEFAULT_SPLITS["train"])
    validation = forms.FloatField(min_value=0, max_value=1, initial=exports.DEFAULT_SPLITS["validation"])
    test = forms.FloatField(min_value=0, max_value=1, initial=exports.DEFAULT_SPLITS["test"])
    formats = forms.MultipleChoiceField(choices=[(f, f) for f in exports.FORMATS],
                                        initial=list(exports.DEFAULT_FORMATS),
                                        widget=forms.CheckboxSelectMultiple)
    seed = forms.IntegerField(min_value=0, max_value=2**31 - 1, initial=0)
    max_length = forms.IntegerField(min_value=1, max_value=1_000_000, initial=exports.DEFAULT_MAX_LENGTH,
                                    label="Max length (tokens)")
    licence = forms.CharField(max_length=100, initial="apache-2.0")
    drop_over_length = forms.BooleanField(required=False, label="Drop rows over max_length tokens",
                                          help_text="otherwise they are kept and counted in the card")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        choices = exports.filter_choices()
        for key in ("levels", "strategies", "workloads"):
            self.fields[key].choices = [(value, value) for value in choices[key]]

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        fractions = [data.get(k) for k in ("train", "validation", "test")]
        if all(f is not None for f in fractions) and abs(sum(fractions) - 1.0) > 1e-6:
            raise forms.ValidationError(f"the split fractions must sum to 1 (they sum to {sum(fractions):g})")
        return data

    def export_options(self) -> dict[str, Any]:
        """The validated form as ``create_export`` keyword arguments (zero-fraction splits left out)."""
        data = self.cleaned_data
        filters: dict[str, Any] = {}
        if data["include"] == "all_verified":
            filters["all_verified"] = True
        for key in ("levels", "strategies", "workloads", "exactness"):
            if data[key]:
                filters[key] = list(data[key])
        if data["policy"]:
            filters["policy"] = data["policy"]
        if data["max_length"] != exports.DEFAULT_MAX_LENGTH:
            filters["max_length"] = data["max_length"]
        if data.get("drop_over_length"):
            filters["over_length"] = "drop"
        if data["licence"] != "apache-2.0":
            filters["licence"] = data["licence"]
        fractions = {k: data[k] for k in ("train", "validation", "test") if data[k] > 0}
        return {"name": data["name"], "filters": filters, "split_policy": {"fractions": fractions},
                "formats": list(data["formats"]), "seed": data["seed"]}
