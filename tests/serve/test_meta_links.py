"""Metadata links (a sample's values, a run's breakdown groups) show exactly the rows they name."""

from __future__ import annotations

import re
from html import unescape
from pathlib import Path

from lmmprobe.metrics.choice import MISSING, breakdown
from lmmprobe.schema import Sample
from lmmprobe.store import Store, queries
from lmmprobe.store.sqlite import score_from_row

from .conftest import Row, choice_sample, client, write_run

VALUES: list[object] = [True, False, None, 2, 0.5, "True", "x"]


def _store(tmp_path: Path) -> tuple[Path, list[Sample]]:
    db = tmp_path / "m.db"
    samples = [
        choice_sample(i, **({} if i % 8 == 7 else {"flag": VALUES[i % len(VALUES)]}))
        for i in range(24)
    ]
    rows = [Row("m", s, "(A)", 0, s.answer == 0) for s in samples]
    with Store(db) as store:
        write_run(store, "r", ["m"], samples, rows)
    return db, samples


def test_breakdown_labels_filter_the_rows_of_their_group(tmp_path: Path) -> None:
    assert queries.MISSING == MISSING
    db, _ = _store(tmp_path)
    with Store(db) as store:
        scores = [score_from_row(r) for r in store.iter_score_rows("r")]
    groups = breakdown(scores, ["flag"], n_boot=0)["flag"]
    assert set(groups) >= {"True", "False", "None", "(missing)", "2", "0.5", "x"}
    with client(db) as c:
        for label, metrics in groups.items():
            got = c.get("/api/runs/r/samples", params={"key": "flag", "value": label}).json()
            assert got["total"] == metrics["accuracy"].n, label


def test_a_sample_pages_value_links_find_the_sample(tmp_path: Path) -> None:
    db, samples = _store(tmp_path)
    with client(db) as c:
        for s in samples:
            if "flag" not in s.metadata:
                continue
            page = c.get(f"/runs/r/samples/{s.id}").text
            (href,) = re.findall(r'href="(/runs/r/samples\?key=flag[^"]*)"', page)
            listing = c.get(unescape(href).replace("/runs/r/samples", "/api/runs/r/samples"))
            found = {row["sample_id"] for row in listing.json()["rows"]}
            assert s.id in found, (s.metadata, href)
            assert all(
                str(t.metadata.get("flag")) == str(s.metadata["flag"])
                for t in samples
                if t.id in found
            ), (s.metadata, href)
