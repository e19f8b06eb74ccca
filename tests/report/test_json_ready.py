"""`json_ready`: what the CLI's ``--format json`` documents go through before `json.dumps`."""

from __future__ import annotations

import json
import math

from lmmprobe.metrics import MetricValue
from lmmprobe.report import json_ready


def test_metric_values_and_nan_become_plain_json() -> None:
    doc = {
        "breakdown": {"skills": {"logic": {"acc": MetricValue(0.5, 0.25, 0.75, 4)}}},
        "figures": [MetricValue(math.nan, None, None, 0), math.inf, 1.5, "x"],
    }
    assert json.loads(json.dumps(json_ready(doc), allow_nan=False)) == {
        "breakdown": {
            "skills": {"logic": {"acc": {"value": 0.5, "low": 0.25, "high": 0.75, "n": 4}}}
        },
        "figures": [{"value": None, "low": None, "high": None, "n": 0}, None, 1.5, "x"],
    }
