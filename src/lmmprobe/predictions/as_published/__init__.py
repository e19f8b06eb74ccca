"""``--as-published``: another tool's own figure for a file, to its last printed digit.

Each tool that records per-item verdicts (MathVista's ``true_false``, VLMEvalKit's ``hit`` and
``score``) or whose script decides them (MMMU's random letters) provides a `PublishedFigure`
hook, registered per reader and benchmark in `PUBLISHED_FIGURES` (one module per tool in this
package); ``lmmprobe score FILE --as-published`` finds the hook for the file's reader and
benchmark (`find_published`) and prints what it returns. The verdicts are the file's own,
replayed; the aggregation is the tool's, reproduced exactly (parity tests run the tools' code).
"""

from lmmprobe.predictions.as_published.base import (
    ANY_READER,
    PUBLISHED_FIGURES,
    Published,
    PublishedFigure,
    PublishedSource,
    PublishedTable,
    find_published,
    published_figure,
)

__all__ = [
    "ANY_READER",
    "PUBLISHED_FIGURES",
    "Published",
    "PublishedFigure",
    "PublishedSource",
    "PublishedTable",
    "find_published",
    "published_figure",
]
