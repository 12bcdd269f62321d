"""The upload form: a name and a KernelBench-style ``.py`` file, or its source pasted (exactly one)."""

from __future__ import annotations

from typing import Any

from django import forms

from curation.services.uploads import MAX_SOURCE_BYTES


class UploadForm(forms.Form):
    name = forms.CharField(max_length=200, help_text="letters, digits and _ . / -, like mine/softmax",
                           widget=forms.TextInput(attrs={"aria-describedby": "name-help"}))
    file = forms.FileField(required=False, label="File (.py)",
                           widget=forms.ClearableFileInput(attrs={"accept": ".py,text/x-python"}))
    source = forms.CharField(required=False, strip=False, label="Or paste the source",
                             widget=forms.Textarea(attrs={"class": "code", "rows": 12,
                                                          "spellcheck": "false"}))
    level = forms.TypedChoiceField(choices=[(1, "1"), (2, "2"), (3, "3")], coerce=int, initial=1)
    dtype = forms.ChoiceField(choices=[("f32", "f32"), ("f64", "f64"), ("f16", "f16")], initial="f32")

    def clean(self) -> dict[str, Any]:
        """One source, as text: the file decoded as UTF-8, or the pasted text."""
        data = super().clean()
        upload, pasted = data.get("file"), data.get("source") or ""
        if upload and pasted.strip():
            raise forms.ValidationError("give a file or paste the source, not both")
        if upload:
            if not upload.name.endswith(".py"):
                raise forms.ValidationError(f"{upload.name} is not a .py file")
            if upload.size > MAX_SOURCE_BYTES:
                raise forms.ValidationError(f"{upload.name} is over {MAX_SOURCE_BYTES // 1024} KiB")
            try:
                data["text"] = upload.read().decode("utf-8")
            except UnicodeDecodeError:
                raise forms.ValidationError(f"{upload.name} is not UTF-8 text") from None
        elif pasted.strip():
            data["text"] = pasted
        else:
            raise forms.ValidationError("choose a .py file or paste its source")
        return data
