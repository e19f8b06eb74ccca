"""EgoSchema, the subset with public answers: the ``egoschema`` definition.

Origin: Mangalam et al. 2023, EgoSchema: A Diagnostic Benchmark for Very Long-form Video
Language Understanding (NeurIPS 2023 Datasets and Benchmarks, arXiv:2308.09126); the release
egoschema/EgoSchema @ `EGOSCHEMA_COMMIT`: ``questions.json`` (5,031 three-minute clips, five
options each, ``option 0`` to ``option 4``), ``subset_answers.json`` (the correct option of 500
of them, the only answers made public) and the videos as ``videos/Q_UID.mp4``. Only the 500
questions with public answers are read; the others are scored by EgoSchema's server.

EgoSchema's repository gives no generative prompt (its baselines each ask their own way), so
the prompt is lmms-eval's (@ 75571cf, ``lmms_eval/tasks/egoschema/utils.py``
``egoschema_doc_to_text`` with the options written ``A. ...`` as its copy holds them). The
score is the share of questions whose chosen option is the answer (the server's and
lmms-eval's ``egoschema_aggregate_score``): ``accuracy``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from lmmprobe.data.base import DataError
from lmmprobe.data.benchmarks import Benchmark, PromptTemplate, RowContext, RowError, benchmark
from lmmprobe.data.benchmarks._lmms import required_text
from lmmprobe.data.benchmarks.hemm_common import read_json
from lmmprobe.data.benchmarks.standard._video import clip
from lmmprobe.schema import Sample
from lmmprobe.schema.video import FramePolicy

__all__ = ["EGOSCHEMA", "EGOSCHEMA_COMMIT", "POLICY"]

EGOSCHEMA_COMMIT = "505c787376b5e066d0ae406d0e0d41245cebba15"
"""The egoschema/EgoSchema commit whose questions and subset answers are read."""

POLICY = FramePolicy.parse("linspace=32")
"""The frames each clip is sampled with unless the run gives ``--frames``: EgoSchema fixes
none; 32 by lmms-eval's sampler, as for Video-MME."""

_OPTIONS = tuple(f"option {i}" for i in range(5))
_LMMS = "75571cfe0fa36ca5ec2e6aa2bb268f9d38295af3"


def _rows(root: Path, split: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
    answers = read_json(root, "subset_answers.json")
    if not isinstance(answers, dict):
        raise DataError(f"{root}/subset_answers.json: expected an object of q_uid: option")
    questions = read_json(root, "questions.json")
    if not isinstance(questions, list):
        raise DataError(f"{root}/questions.json: expected a list of questions")
    given = 0
    for n, row in enumerate(questions, 1):
        # Only the questions whose answer is public; another row is the loader's to refuse.
        # A q_uid that is not text (a number) but names a public answer once written out is
        # given too, so the reader says why it is refused rather than leaving it out unsaid.
        uid = row.get("q_uid") if isinstance(row, dict) else None
        if not isinstance(row, dict) or str(uid) in answers:
            answer = answers.get(uid) if isinstance(uid, str) else None
            given += 1
            yield (
                f"{root}/questions.json:{n}",
                ({**row, "_answer": answer} if isinstance(row, dict) else row),
            )
    if not given and questions and answers:
        raise DataError(
            f"{root}/questions.json: none of its {len(questions):,} questions' q_uid is a key of "
            f"subset_answers.json ({len(answers):,} answers): each q_uid must be the text id "
            "subset_answers.json names"
        )


def _egoschema(row: Mapping[str, Any], ctx: RowContext) -> Sample:
    uid = required_text(row, "q_uid")
    if "/" in uid or "\\" in uid or uid.startswith("."):
        raise RowError("q_uid", f"{uid!r:.80} is not a question id")
    options = [required_text(row, key) for key in _OPTIONS]
    answer = row.get("_answer")
    if isinstance(answer, bool) or not isinstance(answer, int) or not 0 <= answer < 5:
        raise RowError("subset_answers", f"{uid}: the answer {answer!r:.40} is not 0 to 4")
    return Sample(
        id=uid,
        question=required_text(row, "question"),
        choices=options,
        answer=answer,
        formulation="single_choice",
        video=clip(ctx, f"videos/{uid}.mp4", POLICY, "q_uid"),
    )


EGOSCHEMA = benchmark(
    Benchmark(
        name="egoschema",
        groups=("video",),
        title="EgoSchema (subset with public answers)",
        citation="Mangalam et al. 2023, EgoSchema: A Diagnostic Benchmark for Very Long-form "
        "Video Language Understanding, NeurIPS 2023 Datasets and Benchmarks, arXiv:2308.09126",
        license="Ego4D license (egoschema/EgoSchema README: the videos are Ego4D's)",
        formulation="single_choice",
        metric="accuracy",
        prompt=PromptTemplate(
            template="{question}\n{options}\nAnswer with the option's letter from the given "
            "choices directly.",
            source=f"EvolvingLMMs-Lab/lmms-eval @ {_LMMS[:7]} lmms_eval/tasks/egoschema/utils.py "
            "(egoschema_doc_to_text: the question, each option 'A. ...' on its own line, the "
            "post prompt); EgoSchema's own repository gives none",
            option_format="{mark}. {text}",
        ),
        to_sample=_egoschema,
        fetch=(
            'git clone https://github.com/egoschema/EgoSchema "$LMMPROBE_DATA_DIR/egoschema" '
            f'&& git -C "$LMMPROBE_DATA_DIR/egoschema" checkout {EGOSCHEMA_COMMIT} '
            '&& cd "$LMMPROBE_DATA_DIR/egoschema" && kaggle competitions download -c '
            "egoschema-public && unzip -qo egoschema-public.zip"
        ),
        split="subset",
        splits=("subset",),
        size=500,
        layout="files",
        read_files=_rows,
        notes=(
            "Only the 500 questions whose answers EgoSchema made public (subset_answers.json) "
            "are read; the full 5,031 are scored by EgoSchema's server (its validate.py posts "
            "a file of q_uid: option), which lmmprobe does not call.",
            "accuracy: the share of the 500 whose chosen option is the answer, as the server "
            "and lmms-eval's egoschema_aggregate_score count. Answers are read by lmmprobe's "
            "matcher: where lmms-eval's reading (MMMU's) picks a random letter, lmmprobe "
            "counts the answer unparsed and wrong.",
            "Frames: linspace=32 (lmms-eval's sampler, 32 frames): EgoSchema fixes no policy "
            "(its baselines sample their own). --frames samples others.",
            "Data: the repository at the pinned commit (questions.json, subset_answers.json) "
            "and the videos from the Kaggle competition egoschema-public (kaggle CLI, its "
            "rules accepted), unzipped to videos/Q_UID.mp4 (the README's layout).",
        ),
        schema_confirmed=f"egoschema/EgoSchema @ {EGOSCHEMA_COMMIT[:7]} README.md, "
        "subset_answers.json and benchmarking/mPLUG-Owl/run_mplug.py (q_uid, question, "
        "'option 0'..'option 4'; videos/Q_UID.mp4)",
    )
)
