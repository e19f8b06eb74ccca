"""ReForm-Eval's 61 datasets by name, its 8 dimension suites and the suite ``reform-eval``.

ReForm-Eval (Li et al., 2023, arXiv:2310.02569; code FudanDISC/ReForm-Eval) re-formulates 61
task-oriented datasets into single-choice and text-generation questions in 8 capability
dimensions, released as ReForm-Eval-Data (one JSON file per dataset and formulation, images as
base64). The datasets are the rows of one table (``datasets.py``: ``reform-eval-medic`` ...
``reform-eval-flickr30k``, each a `ReformSet` handed to
`lmmprobe.data.benchmarks.reform_common.reform_set`, where the readers live, one per item
layout, since many datasets share a class), the dimension suites the rows of another
(``dimensions.py``: ``reform-eval-coarse`` ...), and ``suite.py`` the suite ``reform-eval``. The
registry imports every module of this folder whose name does not start with ``_`` (nothing
lists them). Every member reads one clone of
ReForm-Eval-Data (``Benchmark.copy``): ``path=CLONE`` or ``$LMMPROBE_DATA_DIR/reform-eval``.
"""
