"""A ``--judge-protocol`` named for data it does not fit fails the run (re-test 19).

A protocol named for every row applies only to the rows it can judge: CharXiv's grader to
CharXiv's questions, ``lmmprobe-choice`` to single-choice rows. Named for other data it applied
to no answer, so no judge was asked, every figure was the rules' own, and the run ended
``complete`` with exit status 0: a CI check of a judged run passed with nothing judged (issue
34 item 5's rule for a judge that fails every call). Now the run is ``judging_failed`` and the
command fails in one line saying what the protocol judges.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.console import lmmprobe_with_key

from lmmprobe.testing.openai_server import FakeOpenAIServer


def _status(folder: Path) -> str:
    return str(json.loads((folder / "results.json").read_text(encoding="utf-8"))["status"])


def test_a_named_protocol_that_fits_none_of_the_answers_fails_run_and_judge(
    tmp_path: Path,
) -> None:
    db = tmp_path / "db"
    with FakeOpenAIServer(reply_table=[("", "A")]) as server:
        judge = ("--judge", f"openai:judge@{server.base_url}")
        charxiv = ("--judge-protocol", "charxiv-descriptive-grade")
        ran = lmmprobe_with_key("run", "-m", "first", "--data", "demo,n=3", *judge, *charxiv,
                                "-q", "--db", db, "--out", tmp_path / "run")  # fmt: skip
        assert ran.returncode == 1, ran.stdout + ran.stderr
        assert "--judge-protocol charxiv-descriptive-grade applies to none of the run's 3 " in (
            ran.stderr
        )
        assert "CharXiv's templates" in ran.stderr and "Traceback" not in ran.stderr
        assert _status(tmp_path / "run") == "judging_failed"
        # `lmmprobe judge` of that run with lmmprobe-choice: demo's rows are single-choice,
        # so it fits and judges; lmmprobe-open fits none of them.
        fits = lmmprobe_with_key("judge", "latest", *judge, "--judge-protocol",
                                 "lmmprobe-choice", "--judge-when", "always", "-q", "--db", db,
                                 "--out", tmp_path / "fits")  # fmt: skip
        assert fits.returncode == 0, fits.stdout + fits.stderr
        assert _status(tmp_path / "fits") == "complete"
        none = lmmprobe_with_key("judge", "latest", *judge, "--judge-protocol", "lmmprobe-open",
                                 "-q", "--db", db, "--out", tmp_path / "none")  # fmt: skip
        assert none.returncode == 1, none.stdout + none.stderr
        assert "--judge-protocol lmmprobe-open applies to none of the run's 3 answer(s)" in (
            none.stderr
        )
        assert _status(tmp_path / "none") == "judging_failed"


def test_a_judge_scale_no_row_is_graded_on_is_refused_as_a_template_is(tmp_path: Path) -> None:
    # Re-test 19: `--judge-scale 1-10` with only single-choice rows (lmmprobe-choice's 0/1
    # verdicts) was ignored without a word, where `--judge-prompt` is refused.
    with FakeOpenAIServer(reply_table=[("", "A")]) as server:
        judge = ("--judge", f"openai:judge@{server.base_url}", "--judge-scale", "1-10")
        dry = lmmprobe_with_key("run", "-m", "first", "--data", "demo,n=2", *judge, "--dry-run")
        assert dry.returncode == 2, dry.stdout + dry.stderr
        assert dry.stderr.strip() == (
            "error: --judge-scale 1-10: a scale is used by lmmprobe-open only, and no row here "
            "is judged by it (protocols: lmmprobe-choice)"
        ), dry.stderr
        assert server.requests_total == 0


def test_a_template_no_row_is_judged_with_is_refused_before_a_real_run_asks_a_model(
    tmp_path: Path,
) -> None:
    # Re-test 19: the dry run refused it at once, a real run asked (and paid) every model,
    # then ended `judging_failed` with "judging failed: ValueError: --judge-prompt ...".
    template = tmp_path / "t.txt"
    template.write_text("{question}\n{answer}\n", encoding="utf-8")
    db = tmp_path / "db"
    with FakeOpenAIServer(reply_table=[("", "A")]) as server:
        for option in (("--judge-prompt", str(template)), ("--judge-scale", "1-5")):
            proc = lmmprobe_with_key("run", "-m", f"openai:fake-vlm@{server.base_url}",
                                     "--data", "demo,n=2", "--judge",
                                     f"openai:judge@{server.base_url}", *option, "-q",
                                     "--db", db)  # fmt: skip
            assert proc.returncode == 2, proc.stdout + proc.stderr
            assert proc.stderr.startswith(f"error: {option[0]} {option[1]}: "), proc.stderr
            assert "is used by lmmprobe-open only" in proc.stderr
            assert "judging failed" not in proc.stderr
            assert server.requests_total == 0
    runs = lmmprobe_with_key("runs", "--db", db, "-f", "json")
    assert not db.exists() or json.loads(runs.stdout) == []


def test_judging_a_stored_run_with_a_template_no_row_uses_records_nothing(tmp_path: Path) -> None:
    # Re-test 19 of issue 34 (#21): `lmmprobe judge` of such a run asked no judge but recorded
    # a `judging_failed` run ("judging failed: ValueError: --judge-prompt ..."), exit 1, where
    # `run` and the dry run refuse at once and record nothing.
    template = tmp_path / "t.txt"
    template.write_text("{question}\n{answer}\n", encoding="utf-8")
    db = tmp_path / "db"
    ran = lmmprobe_with_key("run", "-m", "first", "--data", "demo,n=2", "-q", "--db", db)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    with FakeOpenAIServer(reply_table=[("", "A")]) as server:
        for option in (("--judge-prompt", str(template)), ("--judge-scale", "1-5")):
            proc = lmmprobe_with_key("judge", "latest", "--judge",
                                     f"openai:judge@{server.base_url}", *option, "-q",
                                     "--db", db, "--out", tmp_path / "judged")  # fmt: skip
            assert proc.returncode == 2, proc.stdout + proc.stderr
            assert proc.stderr.strip() == (
                f"error: {option[0]} {option[1]}: a {'template' if 'prompt' in option[0] else 'scale'} "
                "is used by lmmprobe-open only, and no row here is judged by it (protocols: "
                "lmmprobe-choice)"
            ), proc.stderr
            assert server.requests_total == 0
            assert not (tmp_path / "judged").exists()
    runs = lmmprobe_with_key("runs", "--db", db, "-f", "json")
    assert len(json.loads(runs.stdout)) == 1  # the run judged, and no other


def test_the_dry_run_says_a_named_protocol_fits_no_sample_instead_of_counting_its_calls(
    tmp_path: Path,
) -> None:
    # Re-test 19 of issue 34 (#14): the dry run said "at most 3 call(s)" for CharXiv's grader
    # on the demo, which the real run then failed on (judging_failed, exit 1) once it had
    # asked and paid for every model. Whether it fits is told from the samples.
    db = tmp_path / "db"
    with FakeOpenAIServer(reply_table=[("", "A")]) as server:
        judge = ("--judge", f"openai:judge@{server.base_url}")
        model = ("-m", f"openai:fake-vlm@{server.base_url}")
        dry = lmmprobe_with_key("run", *model, "--data", "demo,n=3", *judge, "--judge-protocol",
                                "charxiv-descriptive-grade", "--dry-run", "--db", db)  # fmt: skip
        assert dry.returncode == 1, dry.stdout + dry.stderr
        out = " ".join(dry.stdout.split())
        assert (
            "on openai:fake-vlm@" in out
            and ": no call: --judge-protocol charxiv-descriptive-grade applies to none of the "
            "run's 3 sample(s) (it judges: An answer (not failed, not cut off) to a question of "
            "one of CharXiv's templates)"
            in out
        ), out
        assert "judge call(s)" in out and "at most 3" not in out
        said = " ".join(dry.stderr.split())
        assert "error: --judge-protocol charxiv-descriptive-grade applies to none" in said
        assert "so a real run would ask the models, then no judge, and fail" in said
        # A protocol that fits them is counted as before.
        fits = lmmprobe_with_key("run", *model, "--data", "demo,n=3", *judge, "--judge-protocol",
                                 "lmmprobe-choice", "--judge-when", "always", "--dry-run",
                                 "--db", db)  # fmt: skip
        assert fits.returncode == 0, fits.stdout + fits.stderr
        assert "at most 3 call(s)" in fits.stdout and "no call" not in fits.stdout
        assert server.requests_total == 0
    assert not db.exists()


def test_a_protocol_whose_applies_reads_the_answer_is_undecided_from_the_sample() -> None:
    # A plugin's protocol with `applies` but no `fits`: only the answer tells, so a dry run
    # counts its calls and says so; lmmprobe's own protocols tell from the sample.
    from lmmprobe.judge.protocol import JUDGE_PROTOCOLS, sample_fits
    from lmmprobe.schema import Sample

    class ReadsTheAnswer:
        def applies(self, item: object) -> bool:
            return True

    choice = Sample(id="s", question="q?", choices=["a", "b"], answer=0)
    assert sample_fits(ReadsTheAnswer(), choice) is None  # type: ignore[arg-type]
    assert sample_fits(JUDGE_PROTOCOLS.get("lmmprobe-choice"), choice) is True
    assert sample_fits(JUDGE_PROTOCOLS.get("charxiv-descriptive-grade"), choice) is False
    assert sample_fits(JUDGE_PROTOCOLS.get("mmbench-choice"), choice) is True  # no applies
