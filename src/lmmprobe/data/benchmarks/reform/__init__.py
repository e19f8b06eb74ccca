"""ReForm-Eval's 61 datasets by name, its 8 dimension suites and the suite ``reform-eval``.

ReForm-Eval (Li et al., 2023, arXiv:2310.02569; code FudanDISC/ReForm-Eval) re-formulates 61
task-oriented datasets into single-choice and text-generation questions in 8 capability
dimensions, released as ReForm-Eval-Data (one JSON file per dataset and formulation, images as
base64). One file per dataset (``reform-eval-medic`` ... ``reform-eval-flickr30k``), each a
`ReformSet` handed to `lmmprobe.data.benchmarks.reform_common.reform_set` (the readers live
there, one per item layout, since many datasets share a class); one file per dimension suite
(``reform-eval-coarse`` ...), and ``suite.py``. The registry imports every module of this folder
whose name does not start with ``_`` (nothing lists them). Every member reads one clone of
ReForm-Eval-Data (``Benchmark.copy``): ``path=CLONE`` or ``$LMMPROBE_DATA_DIR/reform-eval``.
"""
