"""The sample browser's text search through the run's search index gives what reading the run does.

The index (`lmmprobe.store.search`) only narrows which rows are read; these tests hold it to
that: on a store whose questions, answers and ids hold case, accents, scripts, quotes, LIKE's
wildcards and FTS5's own syntax, every page (rows, order, cursors, counts) found through the
index equals the page found by reading the run, forwards and backwards.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from lmmprobe.schema import ImageRef, Sample
from lmmprobe.store import Store
from lmmprobe.store.queries import Readers, RowFilter, ScorePage, score_page
from lmmprobe.store.search import SearchIndexer, sidecar_path, wait_ready

from .conftest import Row, client, png_b64, write_run

QUESTIONS = [
    "Is the ÉCOLE open? école, Ecole, ecole",
    "A naïve café in Zürich: ß and ẞ, İstanbul",
    "日本語のテキストはどこ？",
    "The 🐱cat🐱 sat on the mat",
    'He said "hi" and left; it\'s "quoted"',
    "Is it 100% sure? 50%_off and snake_case_name",
    "Multiply a*b, then ** and a * b",
    "NEAR(x y) and NEAR/3, near the end",
    "-minus and +plus, x - y",
    "col:on, {sid} : value, ^caret",
    "AND OR NOT are words here, and or not",
    "C:\\path\\to\\file and back\\slash",
    "Tab\there and new\nline",
    "Plain question about red shapes",
]

CHOICES = [
    ["Red", "GREEN", "bluE"],
    ['"yes"', "no*", "NEAR maybe"],
    ["école", "ÉCOLE", "50%"],
    ["a_b", "a-b", "a:b"],
]

TERMS = [
    "école", "ÉCOLE", "ECOLE", "ecole", "naïve", "NAÏVE", "zürich", "ZÜRICH", "ß", "ẞ a",
    "istanbul", "İst", "日本語", "テキスト", "🐱ca", "cat🐱", '"hi"', 'said "', '"', '""',
    "it's", "100%", "% s", "%_o", "_case", "snake_", "a*b", "*", "**", "a * b", "NEAR(",
    "near", "NEAR/3", "-minus", "x - y", "+plus", "col:", ":on", "{sid}", "} :", "^caret",
    "AND", "or not", "NOT", "C:\\p", "\\to\\", "\\", "\there", "\nline", "red", "RED", "Red",
    "gReEn", "blue", "yes", "no*", "maybe", "a_b", "a-b", "a:b", "s00", "S01", "s1", "re",
    "zzzz", "question", "e", "", "rawout3", "«zeta»", "ZETA", "t3 «",
]  # fmt: skip

MODELS = ["m-one", "m-two", "m:three"]


def _store(root: Path) -> Path:
    db = root / "lmmprobe.db"
    samples = [
        Sample(
            id=f"s{i:03d}",
            question=QUESTIONS[i % len(QUESTIONS)],
            choices=CHOICES[i % len(CHOICES)],
            answer=i % 3,
            images=[ImageRef.from_base64(png_b64())],
            metadata={"subtask": "a" if i % 2 else "b"},
        )
        for i in range(2 * len(QUESTIONS))
    ]
    rows = [
        # The raw output holds text nothing else has: a search finds it there too.
        Row(
            m,
            s,
            f"answer {j} rawout{i % 7} «Zeta»",
            (i + j) % 3 if (i + j) % 5 else None,
            (i + j) % 2 == 0,
        )
        for j, m in enumerate(MODELS)
        for i, s in enumerate(samples)
    ]
    with Store(db) as store:
        write_run(store, "r1", MODELS, samples, rows)
    return db


def _all_pages(readers: Readers, flt: RowFilter, limit: int) -> list[ScorePage]:
    """Every page forwards from the first, then every page backwards from the last."""
    pages: list[ScorePage] = []
    with readers.connection() as conn:
        page = score_page(conn, "r1", flt, limit=limit)
        pages.append(page)
        while page.next is not None:
            page = score_page(conn, "r1", flt, after=page.next, limit=limit)
            pages.append(page)
        while page.prev is not None:
            page = score_page(conn, "r1", flt, before=page.prev, limit=limit)
            pages.append(page)
    return pages


def _filters() -> list[RowFilter]:
    out = []
    for term in TERMS:
        out.append(RowFilter(text=term))
        out.append(RowFilter(text=term, model="m:three"))
        out.append(RowFilter(text=term, model="absent-model"))
        out.append(RowFilter(text=term, verdict="correct", meta_key="subtask", meta_value="a"))
    return out


def test_index_finds_what_reading_the_run_finds(tmp_path: Path) -> None:
    db = _store(tmp_path)
    readers = Readers(db)
    filters = _filters()
    scanned = [_all_pages(readers, f, 4) for f in filters]
    assert all(p.search in ("scan", None) for pages in scanned for p in pages)
    assert any(p.rows for pages in scanned for p in pages)

    assert SearchIndexer(db).build_all() == 1
    readers.close()
    readers = Readers(db)
    for flt, before in zip(filters, scanned, strict=True):
        after = _all_pages(readers, flt, 4)
        assert after == [
            ScorePage(p.rows, p.next, p.prev, p.total, p.capped, a.search)
            for p, a in zip(before, after, strict=True)
        ], flt
        if flt.text and len(flt.text) >= 3:
            assert {p.search for p in after} == {"index"}, flt
    # Terms the scan does find through the index: the comparison above is not all empty pages.
    with readers.connection() as conn:
        hits = score_page(conn, "r1", RowFilter(text='"hi"'), limit=50)
        assert hits.search == "index" and hits.total == 3 * 2  # 3 models x 2 samples
        accents = score_page(conn, "r1", RowFilter(text="ÉCOLE"), limit=50)
        # LIKE folds ASCII only: "ÉCOLE" is in question 0 and in choices ["école", "ÉCOLE"].
        assert accents.total > 0
        raw = score_page(conn, "r1", RowFilter(text="RAWOUT3"), limit=50)
        assert raw.search == "index" and raw.total == 3 * len(range(3, 2 * len(QUESTIONS), 7))
        assert all(
            "ÉCOLE" in (r.question or "") + (r.prediction_text or "") + r.gold_text
            for r in accents.rows
        )
    readers.close()


def test_a_changed_run_is_read_until_its_index_is_rebuilt(tmp_path: Path) -> None:
    db = _store(tmp_path)
    indexer = SearchIndexer(db)
    indexer.build_all()
    readers = Readers(db)
    with readers.connection() as conn:
        assert score_page(conn, "r1", RowFilter(text="naïve")).search == "index"
    time.sleep(0.01)
    with Store(db) as store:
        store.update_run("r1", status="complete")  # a new updated_at: the index is stale
    with readers.connection() as conn:
        assert score_page(conn, "r1", RowFilter(text="naïve")).search == "scan"
    assert indexer.build_all() == 1
    with readers.connection() as conn:
        page = score_page(conn, "r1", RowFilter(text="naïve"))
        assert page.search == "index" and page.total == 2 * len(MODELS)
    readers.close()
    assert sidecar_path(db).is_file()


def test_serve_builds_the_index_and_says_when_a_search_reads_rows(tmp_path: Path) -> None:
    db = _store(tmp_path)
    live_sample = Sample(id="x1", question="still going", choices=["a", "b"], answer=0)
    # The store stays open (its writer alive) so the run stays "running" while served.
    with Store(db) as store, client(db) as c:
        write_run(
            store,
            "live",
            MODELS,
            [live_sample],
            [Row(m, live_sample, "a", 0, True) for m in MODELS],
            finish=False,
        )
        assert wait_ready(db, "r1", timeout_s=60)
        body = c.get("/api/runs/r1/samples", params={"q": "zürich"}).json()
        assert body["search"] == "index" and body["search_note"] is None
        assert len(body["rows"]) == 2 * len(MODELS)
        short = c.get("/api/runs/r1/samples", params={"q": "ß"}).json()
        assert short["search"] == "scan" and "under 3 characters" in short["search_note"]
        live = c.get("/api/runs/live/samples", params={"q": "going"}).json()
        assert live["search"] == "scan" and "still running" in live["search_note"]
        assert len(live["rows"]) == len(MODELS)
        plain = c.get("/api/runs/r1/samples").json()
        assert plain["search"] is None and plain["search_note"] is None
        page = c.get("/runs/live/samples", params={"q": "going"})
        assert page.status_code == 200


@pytest.mark.parametrize(
    "term", ['"hi', "a*b", "NEAR(", "a:b", "-minus", "it's", "AND OR", "^caret", "{sid}"]
)
def test_fts_syntax_in_a_search_is_text(tmp_path: Path, term: str) -> None:
    db = _store(tmp_path)
    SearchIndexer(db).build_all()
    with client(db) as c:
        r = c.get("/api/runs/r1/samples", params={"q": term})
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["search"] == "index"
        assert body["rows"]
        want = term.lower()
        for row in body["rows"]:
            fields = [row["question"] or "", row["prediction_text"] or ""]
            assert want in " ".join([*fields, row["gold_text"], row["sample_id"]]).lower()
