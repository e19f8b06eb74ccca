"""Answer extraction: read which option a generated answer chose, and detect refusals."""

from lmmprobe.parse.dysca import dysca_match
from lmmprobe.parse.extract import Extraction, ExtractionStage, extract_choice
from lmmprobe.parse.reform import mark_index, reform_mark, reform_match
from lmmprobe.parse.refusal import is_refusal

__all__ = [
    "Extraction",
    "ExtractionStage",
    "dysca_match",
    "extract_choice",
    "is_refusal",
    "mark_index",
    "reform_mark",
    "reform_match",
]
