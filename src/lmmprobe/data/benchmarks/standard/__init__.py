"""The standard benchmarks users ask for (MMBench, MMMU, TextVQA...), one file each.

Each module registers one `Benchmark` (its reader, cited prompt, metric and data); the benchmark
registry imports every module of this folder whose name does not start with ``_``, so adding a
benchmark is adding a file. What several definitions share lives in ``_choice`` (multiple-choice
and yes/no) and ``_open`` (open-ended, OCR and captions).
"""
