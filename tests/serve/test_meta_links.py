"""Metadata links (a sample's values, a run's breakdown groups) show exactly the rows they name."""

from __future__ import annotations

import json
import re
from html import unescape
from pathlib import Path
from urllib.parse import unquote

from PIL import Image
from tests.console import lmmprobe

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


# A list value puts the row in the group of each of its items (MathVista's skills): a listed
# item twice counts once, an empty list in no group, a row lacking the key in "(missing)".
LISTS: list[object] = [
    ["algebra", "geometry"], ["algebra"], "algebra", ["logic", "algebra", "logic"], [],
    [True, 2, None], ["(missing)"], 2,
]  # fmt: skip


def _list_store(tmp_path: Path) -> tuple[Path, list[Sample]]:
    db = tmp_path / "l.db"
    samples = [
        choice_sample(i, **({} if i % 9 == 8 else {"skills": LISTS[i % 9]})) for i in range(27)
    ]
    rows = [Row("m", s, "(A)", 0, s.answer == 0) for s in samples]
    with Store(db) as store:
        write_run(store, "r", ["m"], samples, rows)
    return db, samples


def test_a_list_values_groups_link_to_the_rows_the_breakdown_counts(tmp_path: Path) -> None:
    # The run page said "algebra n=12" and its link listed the 3 rows whose value is the text
    # "algebra": a row whose list holds it was in the group, not in the list.
    Image.new("RGB", (8, 8), "red").save(tmp_path / "r.png")
    lines = [
        json.dumps({"id": f"q{i}", "images": ["r.png"], "question": "Colour?",
                    "choices": ["red", "blue", "green"], "answer": i % 3,
                    "metadata": {} if i % 9 == 8 else {"skills": LISTS[i % 9]}})
        for i in range(27)
    ]  # fmt: skip
    (tmp_path / "d.jsonl").write_text("\n".join(lines) + "\n")
    db = tmp_path / "l.db"
    done = lmmprobe("run", "-m", "first", "-m", "random", "-d", tmp_path / "d.jsonl", "--by",
                    "skills", "--db", db, "--out", tmp_path / "o", "-q")  # fmt: skip
    assert done.returncode == 0, done.stderr
    terminal = lmmprobe("show", "latest", "--db", db, columns=200).stdout
    with client(db) as c:
        (run,) = c.get("/api/runs").json()["runs"]
        page = c.get(f"/runs/{run['id']}").text
        cells = re.findall(r'href="([^"]*key=skills[^"]*)">[^<]*</a>.*? n=(\d+)</span>', page)
        labels = {unescape(h).rsplit("value=", 1)[1] for h, _ in cells}
        assert labels == {"algebra", "geometry", "logic", "True", "2", "None", "%28missing%29"}
        for href, n in cells:
            # The group's n as the terminal gives it, and its link lists that many rows.
            label = unquote(unescape(href).rsplit("value=", 1)[1])
            assert re.search(rf"^ {re.escape(label)} +{n} ", terminal, re.M), (label, terminal)
            listing = c.get(unescape(href).replace("/runs/", "/api/runs/", 1)).json()
            assert listing["total"] == int(n), (label, listing["total"], n)
        # The filter offers each item of a list as a value.
        values = c.get(f"/runs/{run['id']}/samples", params={"key": "skills"}).text
        for label in ("algebra", "geometry", "logic"):
            assert f'<option value="{label}">' in values


def test_a_sample_pages_list_value_links_each_item_to_its_group(tmp_path: Path) -> None:
    db, samples = _list_store(tmp_path)
    with client(db) as c:
        s = samples[0]  # ["algebra", "geometry"]
        page = c.get(f"/runs/r/samples/{s.id}").text
        hrefs = re.findall(r'href="(/runs/r/samples\?key=skills[^"]*)"', page)
        assert [unescape(h).rsplit("=", 1)[1] for h in hrefs] == ["algebra", "geometry"]
        for href in hrefs:
            listing = c.get(unescape(href).replace("/runs/r/samples", "/api/runs/r/samples"))
            assert s.id in {row["sample_id"] for row in listing.json()["rows"]}, href
