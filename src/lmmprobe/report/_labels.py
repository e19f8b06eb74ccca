"""Short, stable display names for the HTML report: ``M1 llava-7b``, ``D2``, ``M1 blind``.

A model spec such as ``openai:fake-vlm@http://127.0.0.1:44397/v1`` and an entry label such as
``... [blind] @20261123-200739-38e361`` are exact but crowd every chart and table. The page
names each model by a code and a shortened spec (``M3 fake-vlm``), each entry by that and the
settings its run changed (``M3 fake-vlm blind, likelihood``) or its options say about thinking
(``M4 qwen3-vl,enable_thi… thinking off``), and each data spec by a code
(``D2``); legend tables on the page give the full spec of every code. Codes follow the order
of the runs as given and of the models within each run, so the same arguments always give the
same names.

Only the HTML page uses these names; the Markdown, CSV and JSON formats keep the full labels.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from lmmprobe.report._collect import Entry, ReportData
from lmmprobe.report.settings import model_setting, origin_setting, run_setting

MAX_NAME = 22
"""Longest shortened spec, in characters; longer ones end in an ellipsis."""


def short_spec(spec: str) -> str:
    """A model spec without its backend prefix, server URL and folders.

    ``openai:gpt-4o@https://host/v1`` → ``gpt-4o``; ``hf:/models/llava-1.5-7b,dtype=bf16`` →
    ``llava-1.5-7b,dtype=bf16``; ``random,seed=1`` stays as it is.
    """
    name, sep, options = spec.partition(",")
    name = re.sub(r"^[a-z][a-z0-9_+-]*:(?!//)", "", name)  # backend prefix, not a URL scheme
    name = name.split("@", 1)[0] or name  # the server of an API model
    name = name.rstrip("/").rsplit("/", 1)[-1] or name  # the last folder of a path
    return name + sep + options


def _ellipsize(text: str, limit: int = MAX_NAME) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


@dataclass
class ModelKey:
    """One model spec of the report and its code."""

    code: str
    name: str
    spec: str
    datasets: list[str] = field(default_factory=list)


@dataclass
class DataKey:
    """One data spec of the report and its code."""

    code: str
    spec: str
    runs: list[str] = field(default_factory=list)


@dataclass
class Labels:
    """Display names of a report's models, data specs and entries.

    Attributes:
        models: Model spec → its key, in first-seen order.
        datasets: Data spec → its key, in first-seen order.
        entry: Entry label → short name within its data spec (``M1 fake-vlm``,
            ``M1 fake-vlm blind``; a run suffix only when one model has several runs of one
            setting on one data spec).
        global_entry: Entry label → a name unique across data specs (the short name, followed
            by `` · D2`` when the report holds more than one data spec).
        entry_data: Entry label → the code of its data spec.
        entry_variant: Entry label → its model's name and run settings (``M1 x blind``),
            without a run number: entries of one variant share a colour.

    """

    models: dict[str, ModelKey] = field(default_factory=dict)
    datasets: dict[str, DataKey] = field(default_factory=dict)
    entry: dict[str, str] = field(default_factory=dict)
    global_entry: dict[str, str] = field(default_factory=dict)
    entry_data: dict[str, str] = field(default_factory=dict)
    entry_variant: dict[str, str] = field(default_factory=dict)

    def name(self, label: str) -> str:
        """The global short name of an entry label (the label itself when unknown)."""
        return self.global_entry.get(label, label)

    def model_name(self, spec: str) -> str:
        """The coded name of a model spec (the spec itself when unknown)."""
        key = self.models.get(spec)
        return key.name if key is not None else spec


def build_labels(data: ReportData) -> Labels:
    """Codes and short names for the models, data specs and entries of a report."""
    labels = Labels()
    for run in data.runs:
        dkey = labels.datasets.setdefault(
            run.data, DataKey(code=f"D{len(labels.datasets) + 1}", spec=run.data)
        )
        dkey.runs.append(run.run_id)
    for e in data.entries:
        if e.model not in labels.models:
            code = f"M{len(labels.models) + 1}"
            labels.models[e.model] = ModelKey(code=code, name="", spec=e.model)
        mkey = labels.models[e.model]
        dcode = labels.datasets[e.run.data].code if e.run.data in labels.datasets else "D?"
        if dcode not in mkey.datasets:
            mkey.datasets.append(dcode)
    shorts = {spec: short_spec(spec) for spec in labels.models}
    for spec, mk in labels.models.items():
        short = shorts[spec]
        mk.name = f"{mk.code} {_ellipsize(short)}" if short else mk.code
    _entry_names(data.entries, labels)
    return labels


def _entry_names(entries: list[Entry], labels: Labels) -> None:
    base: dict[str, str] = {}
    for e in entries:
        # Thinking off, effort high (the model's options), blind, likelihood, repeats 3 (the
        # run's settings): what sets it apart, in words a cut-off spec may not show.
        words = model_setting(e.model) + origin_setting(e.run.manifest) + run_setting(e.run.spec)
        name = labels.models[e.model].name + (f" {', '.join(words)}" if words else "")
        base[e.label] = name
        labels.entry_variant[e.label] = name
        labels.entry_data[e.label] = labels.datasets.get(e.run.data, DataKey("D?", "")).code
    # Several runs of one model in one setting on one data spec: number them r1, r2...
    groups: dict[tuple[str, str], list[Entry]] = {}
    for e in entries:
        groups.setdefault((labels.entry_data[e.label], base[e.label]), []).append(e)
    for (_, name), group in groups.items():
        for i, e in enumerate(group, 1):
            labels.entry[e.label] = name if len(group) == 1 else f"{name} r{i}"
    several = len(labels.datasets) > 1
    for e in entries:
        short = labels.entry[e.label]
        labels.global_entry[e.label] = (
            f"{short} \u00b7 {labels.entry_data[e.label]}" if several else short
        )
