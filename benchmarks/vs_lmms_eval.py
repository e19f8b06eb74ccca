"""lmmprobe against lmms-eval 0.7.3: the same multiple-choice questions, whole CLI, two sizes.

Both tools read one JSONL file of multiple-choice questions (four options, answer index) and ask
an instant model that answers at once: lmmprobe's built-in ``first`` baseline, and for lmms-eval
a model class registered through its plugin hook that answers "A" to every request. Each side
runs as a whole process (start-up, loading, prompting, the model, scoring, writing every sample:
lmmprobe's store, lmms-eval's ``--log_samples``), interleaved so a comparison holds when the
shared machine's speed drifts. lmmprobe's first runs each use a fresh store; its cached re-runs
answer every question from one store. Each figure is a whole process's wall time and peak RSS.

``--images`` gives each question its own small PNG (16×16, ``img/`` beside the questions):
lmmprobe checks each file when it loads the set (as for any dataset: Pillow opens and verifies
it) and hashes it for the cache key; lmms-eval's instant model decodes each request's visuals
from its document, as lmms-eval's own models do, then answers without looking at them.
``--sizes 10000 100000`` measures each size on its own set. ``--old-src OLD/src`` runs an older
checkout's lmmprobe (first run and cached re-run) in the same rounds, side by side.
``--profile N`` profiles lmmprobe alone on N questions (first run, then cached re-run) under
cProfile and prints the top entries, imports left out.

lmms-eval is never one of lmmprobe's dependencies: it lives in a scratch virtual environment.
``--setup`` makes one (``python -m venv`` then ``pip install lmms-eval==0.7.3``; add
``--reuse-site`` to let it see this interpreter's packages so pip does not fetch torch again).
lmms-eval 0.7.3 needs ``filelock<4``: with filelock 4 it stops at start-up and still exits 0, so
the warm-up checks it logged every sample. Without an lmms-eval there the script says so and
exits 0 (``--profile`` needs none).

Usage:
    python benchmarks/vs_lmms_eval.py [--setup --reuse-site] [--venv /tmp/lmms-eval-0.7.3]
        [--sizes 10000 100000] [--images] [--rounds 3] [--old-src OLD/src] [--no-lmms-eval]
    python benchmarks/vs_lmms_eval.py --profile 20000 --images [--top 25]
    python benchmarks/vs_lmms_eval.py --commands DIR   # write the inputs, print both commands

Measured 2026-11-29 (issue 35), with images, on the shared 2-core machine while other sessions
kept its load average at 8-21, so absolute times are several times a quiet machine's and only
the ratios within one round compare:

- ``--sizes 10000 --images --rounds 3``, rounds 1 / 2 / 3: lmmprobe first run 15.6 / 22.3 /
  57.9 s, cached re-run 12.8 / 20.7 / 58.4 s, lmms-eval 82.4 / 145.8 / 236.7 s; peak RSS 158,
  166 and 1,099 MiB. lmms-eval / lmmprobe's first run 5.3 / 6.5 / 4.1× (6.5× on the medians),
  first run / cached re-run 1.22 / 1.08 / 0.99×.
- ``--sizes 100000 --images --rounds 1`` (load average 17-20 throughout): lmmprobe first run
  299.6 s, cached re-run 154.0 s, lmms-eval 248.9 s: lmms-eval / lmmprobe's first run 0.83×,
  first run / cached re-run 1.95×; peak RSS 864, 932 and 1,346 MiB. (The issue's quiet-machine figures at 100k: lmmprobe 43.4 s,
  cached 41.1 s, lmms-eval 42.8 s.) At 10k lmms-eval's start-up (~17 s quiet) is most of its
  time; at 100k its per-row cost (~0.25 ms quiet) is below lmmprobe's (~0.4 ms).

The issue's targets at 100k (first run ≥ 3× faster than lmms-eval, cached re-run ≥ 5× faster
than the first run) are not met. Where lmmprobe's time goes, sampled with py-spy (200 Hz, whole
process) at 20,000 questions with images; shares of the run:

- first run: loading the set 30% (of it ``data.rows.check_image`` 24%: Pillow's open 13%,
  ``Path.resolve`` 5.5%, verify 1.6%, ``ImageRef.from_path`` 1.7%), answering 31% (building
  each request, ``Ask.to_request``'s validation, 11%; storing each batch of 64 in its own
  transaction 12.5%, its commit 4.7%), imports 10%, scoring 6.6%, storing scores 5.1%,
  planning and keys 5.1%, results 3%, the data fingerprint 2.6%.
- cached re-run: loading the set 49% (``check_image`` 38%: Pillow's open 19%,
  ``Path.resolve`` 11%), storing scores and samples 8%, scoring 8%, planning and keys 6%,
  to_sample 5%, the data fingerprint 4%, results 3%, reading the stored answers 2.5%.
- garbage collection, spread over all of these: 6.3 s of a 45 s cached re-run (``gc.callbacks``).

So a cached re-run still checks every image with Pillow, which is the largest single cost and
the reason the store saves so little. Measured by replacing ``check_image`` with a stat-only
check (a diagnostic, not a fix: it drops the check that a file is a readable image) on the
20k cached re-run: 22.7 → 17.7 s, and 16.1 s with the collector off too. What is left after
that is per-row Python spread over a dozen steps (none over 13%), so the 5× re-run target needs
the loader to skip re-checking files it has checked before (e.g. the store remembering path,
size, mtime → content hash) and the streaming, store-first rows the rest of issue 35 describes.

The store now remembers each image check (schema 11, ``image_checks``: resolved path, size,
mtime_ns → dimensions and content hash), so a re-run neither decodes nor hashes an unchanged
file. Measured 2026-11-29 with ``--sizes 10000 30000 --images --rounds 3 --no-lmms-eval
--old-src /work/main/src`` (load average 2-5), medians: first run old 6.1 / new 5.8 s at 10k,
15.6 / 15.0 s at 30k (unchanged: the file is hashed when it is checked instead of when its
request is keyed); cached re-run old 5.8 / new 5.4 s at 10k (1.07×), 11.2 / 9.2 s at 30k
(1.22×); peak RSS unchanged. Loading alone (``load_source`` in one process, 10k images):
old 2.7-5.0 s, new 1.7-3.8 s, and the data fingerprint 0.4 → 0.1 s. What a re-run still
spends loading is per row: ``Path.resolve``, one indexed SELECT, building the sample.

Then each image's folder is resolved once per load (the file itself one ``lstat``), the
remembered checks are read a window of paths at a time (one query per window of up to 4,096
files, not one per file), the pixel cap is parsed once per setting, and a command runs the
cyclic garbage collector less often (``gc.freeze`` after imports, thresholds 50,000/20/20: with
Python's own it took a tenth to a sixth of a 10k run's CPU). Measured 2026-11-30 with
``--sizes 10000 30000 --images --rounds 3 --no-lmms-eval --old-src OLD/src`` while other
sessions kept the load average at 7-17 (wall times several times a quiet machine's and very
noisy: old cached runs at 30k took 58 / 119 / 243 s), medians: first run old 39.2 / new
33.3 s at 10k, 149.9 / 74.4 s at 30k; cached re-run old 35.3 / new 17.3 s at 10k (old / new
2.04x), 118.6 / 35.7 s at 30k (3.32x); first run / cached re-run new 1.92x at 10k, 2.08x at
30k (old 1.11x, 1.26x); peak RSS unchanged (150-158 MiB at 10k, 250-269 MiB at 30k). Under
cProfile (10k, cached re-run) ``check_images`` went from 29% of the run to 16%, with no
query per file. What a re-run still spends per row, spread over a dozen steps (none over
13%): building each sample and its image reference (pydantic), keying each ask, scoring
(a validated `Score`), reading each stored answer into a `Response`, writing the samples and
scores, and the results. The 5x target needs those to become per-chunk work (the streamed,
store-first rows of issue 35).

Then a load reads the pixel cap once (``pixel_cap_read_once``; it was read from the
environment five times an image, about a tenth of a re-run's loading) and each recorded image
reference is written by one shared JSON encoder. The script now also gives each process's CPU
seconds (user + system), the figure to compare on a shared machine. Measured 2026-11-30 with
``--sizes 10000 --images --rounds 3 --no-lmms-eval --old-src OLD/src`` (load average 11-17,
wall times noisy), medians: wall first run old 11.3 / new 11.1 s, cached re-run 7.5 / 6.0 s;
CPU first run 4.5 / 4.3 s, cached re-run 3.0 / 2.9 s (first / cached on CPU 1.48x old,
1.44x new; loading alone, in one process at 30k: 2.9 -> 2.4 s CPU for the first read and
2.5 -> 2.1 s for the chunked re-read). At 30k, one round (``--rounds 1``) under a load spike
that hit the new side's runs (wall 114 / 80 s new against 55 / 24 s old) gave CPU first run
old 16.8 / new 19.5 s, cached re-run 10.3 / 12.7 s: inconclusive, to be measured again on a
quiet machine. The 100k comparison with lmms-eval (installed at ``/tmp/lmms-eval-0.7.3``) was
started and stopped unfinished: at a load average of 15 it would not end in time. A cached re-run's CPU at 10k is now about 0.8 s of
start-up, 0.55 s loading, 0.5 s storing samples and scores, 0.3 s results, 0.25 s scoring,
0.2 s planning and keys, 0.1 s reading the answers: no step is large enough for the 5x target
without skipping work a re-run must do. One cost grows with the store, not the run: the
integrity check (``PRAGMA quick_check``) before a store's first write reads the whole file,
about 6 ms of CPU a MiB (0.4 s for a 64 MiB store of a dozen 10k runs); a first run on a fresh
store does not pay it.

Profiled again 2026-11-30 at 100,000 questions with images (the whole CLI in one process,
sampled on a CPU-time clock every 2 ms; load average 12-16): a first run took 34.6 s of CPU
(about 0.35 ms a question), a cached re-run 21.1 s. First run: the first read 51% (the image
check 37%: Pillow's open 13%, hashing the file in a second read 7%, verify 3%; building each
sample 10%), the second read 15%, answering 17% (storing each batch of 64 responses in its
own transaction 10%), storing scores 5%, scoring 4%, planning and keys 4%. Cached re-run: the
two reads 45% (each image's ``lstat`` 6%, its remembered check and reference 9%, building each
sample 13%, fingerprints 6%), storing scores and samples 16%, scoring 9%, planning and keys 8%,
reading the stored answers 5%, results 2%; encoding small JSON values (a score's options,
marks, order, gold and metadata; each fingerprint's metadata) 8% spread over those. Under
``strace -c`` a 20k cached re-run opens no image file (1,530 opens in all) and calls ``stat``
twice an image (once a read). So a cached re-run neither decodes nor hashes an image, and no
step left is more than a sixth of it: the 5x re-run needs the store-first rows of issue 35, not
a local fix.

Then a checked image file of at most 1 MiB is read once, hashed and verified from memory (it
was opened by Pillow from disk, then read again to hash it). Loading alone, in one process on
20k new images (first read, fresh store), old/new alternated: old 2.1-2.9 s, new 1.8-2.2 s of
CPU. Measured with ``--sizes 10000 100000 --images --rounds 2 --no-lmms-eval --old-src OLD/src``
(load average 5-16, medians), whole-process CPU (a whole first run at 20k on a fresh store,
old/new alternated three times at load 5-6: old 5.97 / new 5.82 s, new less in each round): first run old 3.3 / new 3.3 s at 10k, 31.4 /
32.0 s at 100k (old/new 1.02x and 0.98x: within the noise of a shared machine), cached re-run
2.2 / 2.3 s and 18.3 / 18.3 s; first run / cached re-run on CPU 1.55x old, 1.44x new at 10k,
1.72x / 1.75x at 100k (0.31-0.33 ms a question first, 0.18-0.23 ms cached); peak RSS unchanged
(154-162 MiB at 10k, 214-231 MiB at 100k). lmms-eval was not installed here, so the
lmms-eval ratio was not measured this time.

Then a run identical to an earlier complete run copies its sample and score rows in SQL
(``lmmprobe.store.reuse``: same data fingerprint and image places, spec, manifest with
``scorer_version``, answers stored and untouched) after the full first read, instead of
reading the data again, planning, scoring and writing row by row. Measured 2026-11-30 with
``--sizes 10000 100000 --images --rounds 1 --no-lmms-eval --old-src OLD/src`` (load average
0.8-13 and swinging, so wall times are noise: CPU only), CPU first run old 2.9 / new 3.0 s at
10k, 28.2 / 27.9 s at 100k; cached re-run 1.9 / 1.4 s and 15.7 / 6.5 s; first run / cached
re-run on CPU 1.50x old, 2.19x new at 10k, 1.80x old, 4.29x new at 100k (282 / 157 against
279 / 65 us a question); peak RSS of the re-run 212 -> 108 MiB at 100k. The 5x target is not
met: what a copying re-run spends at 100k (about 6.5 s of CPU) is the first read, about 4 s
(each row's JSON, its checks, building its `Sample` and `ImageRef` with pydantic, the
fingerprint), the copy and its checks about 1.2 s (two ``INSERT ... SELECT`` of 100k rows with
their indexes, the answers' totals), the results from the stored rows about 0.9 s, start-up
about 0.45 s. 5x needs that first read at about 2.5 s: a store that remembers validated rows
by their raw bytes (as it remembers image checks), not built here. A benchmark's re-run only
copies when the source tree's git state is the same as the first run's (the commit, ``+dirty``).

Then a large data file's first read is remembered (``lmmprobe.data.remembered_loads``: schema
14, table ``load_checks``). Profiled first (``--profile 30000 --images``, cProfile, load
average 5-8): of a copying re-run (14.7 s under cProfile) the first read was 72% (parsing and
validating rows 44%: each image's check 23%, building each `Sample` 18%; the fingerprint 7%),
the copy 10%, results 7%. Timed per row on its own, a row whose image check is remembered
costs about 28 us to parse (12 of them the image check: resolving and ``lstat``, the
remembered check, the reference) and 7 us to fingerprint; remembering each validated row by
its bytes would have saved only the parse's validation (about 6 us of the 35). So what is
remembered is the whole read of a file, keyed by the file's bytes (hashed: about 25 ms for the
100k file), a hash of the code that reads rows (every module of ``lmmprobe.data`` and
``lmmprobe.schema``, with the versions of lmmprobe, Python, pydantic-core and Pillow) and the
read's settings (spec, strict, limit, chunk size, the pixel cap), with each image path it met
and the file that path led to (resolved path, size, ``ctime_ns``). A re-run of the same bytes
resolves and stats each image path, compares, and takes the read's count, fingerprints,
places and kinds from the store: no row is parsed. Only a read of more than one chunk with no
rejected row and no video is remembered, so nothing changes at 10k (one chunk). Measured
2026-11-30, whole-process CPU seconds (load average 7-11, then 5-9: wall times are noise):

- ``--sizes 10000 100000 --images --rounds 1 --old-src /work/main/src``: at 10k first run
  old 2.9 / new 3.3 s, cached re-run 1.4 / 1.4 s (unchanged path); lmms-eval 16.6 s (5.78x
  old's first run, 5.10x new's). At 100k first run old 31.4 / new 32.5 s, cached re-run new
  3.9 s (old 18.0 s: main's commit moved during the measurement, so old's re-run did not
  copy), lmms-eval 48.2 s (1.53x old's first run, 1.48x new's; wall 185.5 s against new's
  168.7 s).
- ``--sizes 100000 --images --rounds 1 --old-src OLD/src`` (OLD: ``git archive`` of the commit
  before, so its commit stays put): first run old 29.7 / new 31.6 s, cached re-run old 6.5 /
  new 3.7 s (old/new 1.73x); first run / cached re-run on CPU old 4.60x, new 8.46x (297 / 65
  against 316 / 37 us a question); lmms-eval 51.7 s, 1.74x old's first run and 1.64x new's;
  peak RSS of the cached re-run 107 -> 89 MiB.

So the cached re-run target (5x its first run at 100k) is met: 8.4-8.5x on CPU. The first
run target (3x faster than lmms-eval at 100k) is not: 1.5-1.6x on CPU, and per question the
two cost about the same (lmms-eval's ~0.35 ms against lmmprobe's ~0.32 ms, from the two
sizes; lmms-eval's lead at 10k is its start-up). A first run reads the file twice (checked in
full, then a chunk at a time: memory stays flat), opens, verifies and hashes every new image
with Pillow, and commits each batch of answers before scoring it; 3x needs that per-row cost
roughly halved, which this change does not touch (the first run pays about 0.4 s more at 100k
for noting each image path and writing the record).

Then (2026-12-01) a run of more than one chunk reads its data once: each chunk of the first
read is kept as it is read (``lmmprobe.data.spill``: pickled, zlib level 1, into an anonymous
temporary file, ~55 bytes a question here) and given again from there for each model and the
judges, each chunk still checked against its fingerprint, instead of parsing, validating and
checking every row a second time. Under cProfile (``--profile 30000 --images``) ``stream_rows``
is called 30,001 times, not 60,002, and giving the chunks again takes 0.66 s of an 18.8 s first
run (3.2 s of 19.7 s before). cProfile overstated that second read (it charges per-call Python
most): timed in one process on 30k rows with one PNG each (a fresh store, the CLI's collector
thresholds, CPU seconds), the first read went from 3.5-3.8 to 4.0 s (pickling and compressing
each 10k chunk, ~0.1 s) and each later pass over the chunks from 1.17 to 0.40 s (unpickling
~0.1 s and checking the fingerprint 0.05 s a 10k chunk): about 0.4 s saved per 30k rows on a
one-model run, 0.8 s more per further model or judging pass. Whole CLI, CPU seconds (OLD:
``git archive d141158``):

- ``--sizes 30000 100000 --images --rounds 1 --old-src OLD/src`` (load average 2-6), twice: at
  30k first run old 9.0 / new 8.4 s, then 8.1 / 8.1 s; at 100k 27.5 / 28.5 s, then 26.2 /
  26.9 s; lmms-eval 22.2 and 19.7 s at 30k, 45.3 and 43.4 s at 100k (1.59-1.61x new's first
  run at 100k, 1.65-1.66x old's). One round is within the machine's noise.
- ``--sizes 100000 --images --rounds 3 --no-lmms-eval --old-src OLD/src`` (load average 3-5),
  medians: first run old 28.2 / new 26.7 s (282 / 267 us a question, 5% less), cached re-run
  3.6 / 3.5 s (the copy path: unchanged); peak RSS of the first run 230 -> 220 MiB.

Storing a model's answers in fewer transactions was measured and left alone: 30k responses
stored 64 a transaction took 0.26 s of CPU, 640 a transaction 0.23 s, all in one 0.25 s (the
cost is per row; what the profile charges ``put_responses`` is building the rows and writing
each chunk's samples), and storing each batch as it returns is what keeps an answer delivered
before a crash (issue 34, item 4). The 3x target against lmms-eval at 100k is still not met
(1.6x on CPU): the first read (half of a first run under cProfile: each row's JSON, its
checks, each new image opened, verified and hashed with Pillow) is now the one read, and the
rest is per-row work spread over planning, answering, scoring and storing.

Then (2026-12-01) a large load checks its new image files on the second core: past 1,024 new
files a worker process (``lmmprobe.data.image_pool``, a ``python -P -m`` child over a socket
pair) opens, verifies and hashes a window of 2,048 rows' files while the loading process parses
the next window, and each row is settled in order with the verdict checking it here gives.
Profiled first (``py-spy record --gil``, whole CLI, 30,000 questions, one PNG each): reading the
data 45% of the first run, of which checking new images 27% (Pillow's open 12%, building the
reference 4%, opening the file 2%, verify 1%); answering 20%, planning and keys 13%, scoring and
storing scores 12%, writing samples 5%, the spill 9%, imports 6%. The loading process's own CPU
(``resource.getrusage(RUSAGE_SELF)``, the worker's apart) at 30k: 8.1 -> 6.4 s; at 100k:
26.7 -> 20.5 s, the worker 4.2 s. Whole CLI, ``--sizes 100000 --images --rounds 1 --old-src
OLD/src`` on a quiet machine (load average 0.9-1.1; OLD: the commit before): first run old
27.0 / new 22.4 s (1.21x), cached re-run 3.9 / 4.0 s, lmms-eval 42.5 s: lmms-eval / first run
1.58x old, 1.89x new; CPU (the worker's included) 26.3 / 25.7 s; peak RSS 222 / 226 MiB. The
worker needs an idle core: with other sessions' tests running (load average 2-4), the same
command gave old 46.0 / new 35.5 s at 100k and 9.8 / 9.5 s at 30k. The 3x target (about 14 s
here) is still not met: once the images are checked elsewhere, the loading process spends about
205 us a question, two thirds of it after the read (planning, keying, answering, scoring and
storing each row, one after the other), which no second process shares.

Then (2026-12-02) the first run was profiled again for per-row cuts (py-spy ``--gil`` on the
main process, 20k; stage CPU timed in the CLI at 100k, load average 3-4): the main process
spent 26.5 s of CPU at 100k, the first read 99 us a question (parsing 43: its image deferral
19, the `Sample` 14; the spill 13; fingerprints 6.5), the run 149 us (storing responses and
recording samples 38, storing scores 23, reading back and checking each spilled chunk 17,
planning and keys 16, building each `Request` 16, scoring 15), results 11 us. No step is a
tenth of it; what is large is one validation or one write a row needs, or a guard (the chunk
check, the collector's thresholds) that stays. Each round now alternates which side goes first
and prints the load average; the summary gives CPU ms a question and the CPU each round's new
first run saved against old's. ``--sizes 10000 100000 --images --rounds 3 --no-lmms-eval
--old-src OLD/src`` (load average 3.9-6.4), medians: first run CPU old 4.0 / new 3.8 s at 10k,
39.1 / 37.9 s at 100k (0.39 / 0.38 ms a question), saved per round +7.3 / -6.0 / +4.6 % and
+3.2 / +15.2 / -10.7 %: the one cut made (no validated ``Usage()`` per stored response without
token counts, ~1 us a row) is below what this machine can tell apart; peak RSS unchanged.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LMMS_EVAL_VERSION = "0.7.3"
FILELOCK_FOR_LMMS_EVAL = "filelock==3.18.0"
LETTERS = "ABCD"

_TASK_YAML = """\
task: probe_mc
dataset_path: json
dataset_kwargs:
  data_files:
    test: {data}
test_split: test
output_type: generate_until
doc_to_visual: !function utils.doc_to_visual
doc_to_text: !function utils.doc_to_text
doc_to_target: !function utils.doc_to_target
process_results: !function utils.process_results
generation_kwargs:
  max_new_tokens: 4
  temperature: 0
  do_sample: false
metric_list:
  - metric: accuracy
    aggregation: mean
    higher_is_better: true
"""

# The same prompt lmmprobe's default formulation builds: question, lettered options, instruction.
_TASK_UTILS = """\
import os

from PIL import Image

LETTERS = "ABCD"
DATA_DIR = {data_dir!r}


def doc_to_visual(doc):
    # Image paths are relative to the questions file, as lmmprobe reads them.
    return [Image.open(os.path.join(DATA_DIR, p)).convert("RGB") for p in doc["images"]]


def doc_to_text(doc, lmms_eval_specific_kwargs=None):
    options = "\\n".join(f"{{LETTERS[i]}}. {{c}}" for i, c in enumerate(doc["choices"]))
    return f"{{doc['question']}}\\n{{options}}\\nAnswer with the option's letter from the given choices directly."


def doc_to_target(doc):
    return LETTERS[doc["answer"]]


def process_results(doc, results):
    reply = results[0].strip()
    letter = reply[:1].upper()
    return {{"accuracy": float(letter == LETTERS[doc["answer"]])}}
"""

_PLUGIN_INIT = 'AVAILABLE_MODELS = {"instant": "Instant"}\n'

_PLUGIN_MODEL = '''\
"""An instant model: answers "A" to every request without looking at it."""

from lmms_eval.api.model import lmms


class Instant(lmms):
    def __init__(self, **kwargs):
        super().__init__()

    def generate_until(self, requests):
        # As lmms-eval's models do: each request's visuals come from its document (decoded,
        # then sized), though this model answers without looking at them.
        out = []
        for contexts, gen_kwargs, doc_to_visual, doc_id, task, split in (r.args for r in requests):
            visuals = doc_to_visual(self.task_dict[task][split][doc_id])
            [v.size for v in visuals]
            out.append("A")
        return out

    def loglikelihood(self, requests):
        raise NotImplementedError("instant: generation only")

    def generate_until_multi_round(self, requests):
        raise NotImplementedError("instant: generation only")
'''


def write_questions(path: Path, n: int, seed: int = 0, *, images: bool = False) -> None:
    """Write `n` four-option questions in lmmprobe's JSONL format (lmms-eval reads it too).

    Args:
        path: The file to write.
        n: How many questions.
        seed: Seeds the answers' positions and the numbers asked about.
        images: Give each question its own small PNG (16×16, one colour per question), written
            under ``img/`` beside `path` and named relative to it.

    """
    rng = random.Random(seed)
    if images:
        from PIL import Image  # only this option draws pictures

        (path.parent / "img").mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as f:
        for i in range(n):
            a, b = rng.randint(2, 99), rng.randint(2, 99)
            right = a + b
            wrong = rng.sample([v for v in range(right - 9, right + 10) if v != right], 3)
            answer = rng.randrange(4)
            choices = [str(v) for v in [*wrong[:answer], right, *wrong[answer:]]]
            pictures = []
            if images:
                name = f"img/q{i:06d}.png"
                colour = (i % 256, (i // 256) % 256, (i // 65536) % 256)
                Image.new("RGB", (16, 16), colour).save(path.parent / name)
                pictures.append(name)
            row = {
                "id": f"q{i:05d}",
                "images": pictures,
                "question": f"What is {a} + {b}?",
                "choices": choices,
                "answer": answer,
            }
            f.write(json.dumps(row) + "\n")


def write_lmms_inputs(root: Path, data: Path) -> tuple[Path, Path]:
    """Write lmms-eval's task folder and the plugin package holding the instant model.

    Returns:
        The task folder (``--include_path``) and the folder to put on ``PYTHONPATH``.

    """
    # lmms-eval's plugin hook reads the package's models/ and tasks/ folders.
    package = root / "plugin" / "probe_instant"
    tasks = package / "tasks" / "probe_mc"
    tasks.mkdir(parents=True, exist_ok=True)
    (tasks / "probe_mc.yaml").write_text(_TASK_YAML.format(data=data), encoding="utf-8")
    (tasks / "utils.py").write_text(_TASK_UTILS.format(data_dir=str(data.parent)), encoding="utf-8")
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "tasks" / "__init__.py").write_text("", encoding="utf-8")
    models = package / "models"
    models.mkdir(parents=True, exist_ok=True)
    (models / "__init__.py").write_text(_PLUGIN_INIT, encoding="utf-8")
    (models / "instant.py").write_text(_PLUGIN_MODEL, encoding="utf-8")
    return tasks.parent, root / "plugin"


def lmms_command(python: Path, root: Path, tasks: Path, plugin: Path, out: Path) -> list[str]:
    """lmms-eval's whole CLI on the task, through ``env`` so it can be timed as one process."""
    return [
        "env",
        f"PYTHONPATH={plugin}",
        "LMMS_EVAL_PLUGINS=probe_instant",
        f"HF_HOME={root / 'hf'}",
        "HF_DATASETS_OFFLINE=1",
        "HF_HUB_OFFLINE=1",
        "TOKENIZERS_PARALLELISM=false",
        str(python),
        "-m",
        "lmms_eval",
        "--model",
        "instant",
        "--tasks",
        "probe_mc",
        "--include_path",
        str(tasks),
        "--batch_size",
        "1",
        "--log_samples",
        "--output_path",
        str(out),
        "--verbosity",
        "WARNING",
    ]


def lmmprobe_command(data: Path, db: Path, out: Path) -> list[str]:
    """lmmprobe's whole CLI (the console script beside this interpreter) on the same file."""
    script = Path(sys.executable).with_name("lmmprobe")
    exe = [str(script)] if script.exists() else [sys.executable, "-m", "lmmprobe.cli.main"]
    return [*exe, "run", "-m", "first", "-d", str(data), "--db", str(db), "--out", str(out)]


def has_lmms_eval(python: Path) -> bool:
    """Whether `python` exists and imports lmms-eval at the pinned version."""
    if not python.exists():
        return False
    probe = "import importlib.metadata as m; print(m.version('lmms-eval'))"
    done = subprocess.run([str(python), "-c", probe], capture_output=True, text=True, check=False)
    return done.returncode == 0 and done.stdout.strip() == LMMS_EVAL_VERSION


def setup_venv(venv: Path, reuse_site: bool) -> None:
    """Make the scratch environment and install lmms-eval into it (never into this one)."""
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    if reuse_site:
        # Seen after the venv's own packages: pip installs only what is missing or clashes.
        import site

        pth = next((venv / "lib").glob("python*/site-packages")) / "_reuse_base.pth"
        pth.write_text("\n".join(site.getsitepackages()) + "\n", encoding="utf-8")
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q"]
    subprocess.run([*pip, f"lmms-eval=={LMMS_EVAL_VERSION}"], check=True)
    # lmms-eval 0.7.3 imports filelock._api, which filelock 4 no longer has.
    subprocess.run([*pip, FILELOCK_FOR_LMMS_EVAL], check=True)


def timed(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, float, float]:
    """Wall seconds, peak RSS (MiB) and CPU seconds (user + system) of one whole process.

    Its output is kept only on failure. The CPU seconds are the figure to compare on a shared
    machine, where other work stretches the wall time of both sides alike but unevenly.
    """
    with tempfile.TemporaryFile() as log:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)
        # wait4 rather than wait: it also gives this one process's peak RSS.
        _, status, usage = os.wait4(proc.pid, 0)
        dt = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            log.seek(0)
            tail = log.read().decode("utf-8", "replace")[-2000:]
            raise SystemExit(f"{' '.join(cmd[:3])} ... exited {proc.returncode}:\n{tail}")
    return dt, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime


def lmms_samples(out: Path) -> int:
    """How many samples lmms-eval logged under `out` (0 when it stopped before evaluating)."""
    files = list(out.rglob("*samples_probe_mc*.jsonl"))
    return sum(1 for f in files for line in f.open(encoding="utf-8") if line.strip())


def probe_env(src: Path | None) -> dict[str, str]:
    """This environment, with `src` (an older checkout's ``src``) first on the import path."""
    env = dict(os.environ)
    # As an installed package is (pip compiles it): the warm-up writes the bytecode cache, so
    # the timed runs do not compile lmmprobe's ~425 modules each time.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if src is not None:
        env["PYTHONPATH"] = str(src)
    return env


VARIANTS = ("new first", "new cached", "old first", "old cached", "lmms-eval")
LOADS: list[float] = []
"""The machine's 1-minute load average after each round: how shared it was while measured."""


def measure(
    args: argparse.Namespace, python: Path, root: Path, n: int
) -> dict[str, list[tuple[float, float, float]]]:
    """Time every variant on `n` questions, interleaved, `args.rounds` times after warm-ups.

    Returns:
        Each variant's (seconds, peak MiB, CPU seconds) per round; the old code's only with
        ``--old-src``.

    """
    data = root / "questions.jsonl"
    write_questions(data, n, images=args.images)
    tasks, plugin = write_lmms_inputs(root, data)
    lmms_out = root / "lmms-out"
    lmms = lmms_command(python, root, tasks, plugin, lmms_out)
    sides = {"new": probe_env(None)}
    if args.old_src:
        sides["old"] = probe_env(args.old_src.resolve())
    # Warm-ups: lmms-eval's datasets cache and the OS file cache; each side fills the store
    # its cached re-runs read.
    if not args.no_lmms_eval:
        timed(lmms)
        logged = lmms_samples(lmms_out)
        if logged != n:  # lmms-eval can stop at start-up and still exit 0 (filelock 4)
            raise SystemExit(
                f"lmms-eval logged {logged} of {n} samples: it did not evaluate them all"
            )
    for side, env in sides.items():
        timed(lmmprobe_command(data, root / f"{side}-cached.db", root / "probe-out"), env)
    LOADS.append(os.getloadavg()[0])
    got: dict[str, list[tuple[float, float, float]]] = {v: [] for v in VARIANTS}
    for r in range(args.rounds):
        line = []
        # Which side goes first alternates: a load that rises through a round slows both.
        order = list(sides.items())
        if r % 2:
            order.reverse()
        for side, env in order:
            fresh = root / f"{side}-fresh.db"
            got[f"{side} first"].append(
                timed(lmmprobe_command(data, fresh, root / "probe-out"), env)
            )
            fresh.unlink()
            got[f"{side} cached"].append(
                timed(lmmprobe_command(data, root / f"{side}-cached.db", root / "probe-out"), env)
            )
        if not args.no_lmms_eval:
            shutil.rmtree(lmms_out, ignore_errors=True)
            got["lmms-eval"].append(timed(lmms))
        for v in VARIANTS:
            if got[v]:
                line.append(f"{v} {got[v][-1][0]:.1f}s")
        LOADS.append(os.getloadavg()[0])
        print(
            f"{n} questions, round {r + 1}: "
            + ", ".join(line)
            + f" (load average {LOADS[-1]:.1f})",
            flush=True,
        )
    return {v: runs for v, runs in got.items() if runs}


def profile(n: int, images: bool, top: int) -> None:
    """Profile lmmprobe's first run and cached re-run on `n` questions; print the top entries.

    Each run is the whole CLI under cProfile (which slows Python-heavy code more than C calls,
    so the shares are a guide, not a measurement). Entries are lmmprobe's functions and the
    image library's, by cumulative time, as a share of the run.
    """
    import pstats

    root = Path(tempfile.mkdtemp(prefix="vs-lmms-profile-"))
    try:
        data = root / "questions.jsonl"
        write_questions(data, n, images=images)
        for label in ("first run", "cached re-run"):
            stats = root / "run.prof"
            cmd = lmmprobe_command(data, root / "profiled.db", root / "probe-out")
            module = [sys.executable, "-m", "cProfile", "-o", str(stats), "-m", "lmmprobe.cli.main"]
            timed([*module, *cmd[cmd.index("run") :]], probe_env(None))
            table = pstats.Stats(str(stats)).stats
            total = max(v[3] for v in table.values())
            ours = [
                (v[3], v[1], f"{Path(k[0]).name}:{k[1]}({k[2]})")
                for k, v in table.items()
                if k[2] != "<module>"  # imports: start-up, the same at every size
                and (("lmmprobe" in k[0] and "/cli/" not in k[0]) or "/PIL/" in k[0])
            ]
            print(f"\nprofile, {label}, {n} questions: {total:.1f} s under cProfile")
            for cum, calls, name in sorted(ours, reverse=True)[:top]:
                print(f"  {100 * cum / total:5.1f}%  {cum:6.2f} s  {calls:>7}  {name}")
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000], help="questions per run")
    ap.add_argument("--images", action="store_true", help="one small PNG per question")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds after warm-ups")
    ap.add_argument("--old-src", type=Path, help="an older checkout's src, run side by side")
    ap.add_argument("--venv", type=Path, default=Path("/tmp/lmms-eval-0.7.3"))
    ap.add_argument(
        "--no-lmms-eval",
        action="store_true",
        help="time lmmprobe alone (with --old-src: old against new), lmms-eval neither run nor needed",
    )
    ap.add_argument(
        "--setup", action="store_true", help="make the scratch venv if it lacks lmms-eval"
    )
    ap.add_argument(
        "--reuse-site", action="store_true", help="with --setup: reuse this venv's packages"
    )
    ap.add_argument("--commands", type=Path, help="write the inputs under DIR, print both commands")
    ap.add_argument(
        "--profile", type=int, metavar="N", help="profile lmmprobe alone on N questions, then stop"
    )
    ap.add_argument("--top", type=int, default=25, help="with --profile: entries shown")
    args = ap.parse_args()
    if args.profile:
        profile(args.profile, args.images, args.top)
        return
    python = args.venv / "bin" / "python"
    if args.setup and not has_lmms_eval(python):
        setup_venv(args.venv, args.reuse_site)
    if not args.no_lmms_eval and not has_lmms_eval(python):
        print(
            f"skipped: lmms-eval {LMMS_EVAL_VERSION} is not installed in {args.venv} "
            "(run with --setup to make that scratch venv)"
        )
        return
    if args.commands:
        root = args.commands
        root.mkdir(parents=True, exist_ok=True)
        data = root / "questions.jsonl"
        write_questions(data, args.sizes[0], images=args.images)
        tasks, plugin = write_lmms_inputs(root, data)
        print("lmmprobe (first run, fresh store):")
        print(" ", " ".join(lmmprobe_command(data, root / "fresh.db", root / "probe-out")))
        print("lmmprobe (cached re-run):")
        print(" ", " ".join(lmmprobe_command(data, root / "cached.db", root / "probe-out")))
        print("lmms-eval:")
        print(" ", " ".join(lmms_command(python, root, tasks, plugin, root / "lmms-out")))
        return
    results = {}
    for n in args.sizes:
        root = Path(tempfile.mkdtemp(prefix="vs-lmms-"))
        try:
            results[n] = measure(args, python, root, n)
        finally:
            shutil.rmtree(root, ignore_errors=True)
    med = statistics.median
    what = "with one PNG each" if args.images else "text only"
    print(f"\nmedian of {args.rounds} round(s), questions {what}; seconds (peak RSS MiB)")
    print(f"{'questions':>10} " + " ".join(f"{v:>17}" for v in VARIANTS))
    figures = []
    for n, got in results.items():
        cells = []
        for v in VARIANTS:
            if v not in got:
                cells.append(f"{'-':>17}")
                continue
            t, m = med(x[0] for x in got[v]), max(x[1] for x in got[v])
            cells.append(f"{t:>8.1f} ({m:>5.0f})")
            key = v.replace("-", "_").replace(" ", "_")
            figures += [f"{key}_s_{n}={t:.1f}", f"{key}_mib_{n}={m:.0f}"]
        print(f"{n:>10} " + " ".join(cells))
        lmms = med(x[0] for x in got["lmms-eval"]) if "lmms-eval" in got else None
        for side in ("new", "old"):
            if f"{side} first" not in got:
                continue
            first = med(x[0] for x in got[f"{side} first"])
            cached = med(x[0] for x in got[f"{side} cached"])
            versus = f"lmms-eval / first run {lmms / first:.2f}x, " if lmms else ""
            print(f"{'':>10} {side}: {versus}first run / cached re-run {first / cached:.2f}x")
            if lmms:
                figures.append(f"{side}_vs_lmms_{n}={lmms / first:.2f}")
            figures.append(f"{side}_cached_speedup_{n}={first / cached:.2f}")
        if "old cached" in got:  # the same re-run, old code against new
            old_c, new_c = (med(x[0] for x in got[f"{s} cached"]) for s in ("old", "new"))
            print(f"{'':>10} cached re-run, old / new: {old_c / new_c:.2f}x")
            figures.append(f"cached_old_over_new_{n}={old_c / new_c:.2f}")
    print("\nmedian CPU seconds (user + system) of the same runs, and first run / cached re-run")
    print(f"{'questions':>10} " + " ".join(f"{v:>17}" for v in VARIANTS))
    for n, got in results.items():
        cpu = {v: med(x[2] for x in got[v]) for v in VARIANTS if v in got}
        print(
            f"{n:>10} "
            + " ".join(f"{cpu[v]:>17.1f}" if v in cpu else f"{'-':>17}" for v in VARIANTS)
        )
        for side in ("new", "old"):
            if f"{side} first" in cpu:
                first, cached = cpu[f"{side} first"], cpu[f"{side} cached"]
                # Per question: the whole process's CPU over the questions, start-up included
                # (what the ratios at two sizes tell apart from the per-row cost).
                per_row = f"{1e6 * first / n:.0f} / {1e6 * cached / n:.0f} us a question"
                versus = (
                    f", lmms-eval / first run {cpu['lmms-eval'] / first:.2f}x"
                    if ("lmms-eval" in cpu)
                    else ""
                )
                print(
                    f"{'':>10} {side}: CPU, first run / cached re-run {first / cached:.2f}x "
                    f"({per_row}){versus}"
                )
                # The least CPU of the rounds too: on a shared machine, the run least slowed.
                least = min(x[2] for x in got[f"{side} first"])
                figures.append(f"{side}_cpu_ms_per_row_first_{n}={1e3 * first / n:.3f}")
                figures.append(f"{side}_cpu_ms_per_row_first_min_{n}={1e3 * least / n:.3f}")
                figures.append(f"{side}_cpu_first_s_{n}={first:.1f}")
                figures.append(f"{side}_cpu_cached_s_{n}={cached:.1f}")
                figures.append(f"{side}_cpu_cached_speedup_{n}={first / cached:.2f}")
                if versus:
                    figures.append(f"{side}_cpu_vs_lmms_{n}={cpu['lmms-eval'] / first:.2f}")
        if "old cached" in cpu:
            figures.append(f"cpu_first_old_over_new_{n}={cpu['old first'] / cpu['new first']:.2f}")
            # Paired by round (old and new ran back to back): the share of the first run's CPU
            # the new code saves, each round, then its median.
            saved = [
                1 - new[2] / old[2]
                for new, old in zip(got["new first"], got["old first"], strict=True)
            ]
            print(
                f"{n:>10} first run CPU saved by new, per round: "
                + ", ".join(f"{100 * x:.1f}%" for x in saved)
            )
            figures.append(f"cpu_first_saved_pct_{n}={100 * med(saved):.1f}")
            figures.append(
                f"cpu_cached_old_over_new_{n}={cpu['old cached'] / cpu['new cached']:.2f}"
            )
    if LOADS:
        print(f"load average while measured: {min(LOADS):.1f}-{max(LOADS):.1f}")
        figures += [f"load_min={min(LOADS):.1f}", f"load_max={max(LOADS):.1f}"]
    print(" ".join(figures))


if __name__ == "__main__":
    os.environ.setdefault("PYTHONWARNINGS", "ignore")
    main()
