"""Typed, documented data schemas shared by every layer."""

from lmmprobe.schema.benchmark import BenchmarkTag, PromptTemplate
from lmmprobe.schema.image import ImageRef, register_renderer
from lmmprobe.schema.judgement import DecidedBy, JudgeConfig, Judgement
from lmmprobe.schema.price import Price
from lmmprobe.schema.request import ContentPart, GenerationParams, Message, Method, Request
from lmmprobe.schema.response import (
    ERROR_TYPES,
    MAX_REPLY_CHARS,
    MAX_TOKEN_COUNT,
    ErrorInfo,
    Response,
    Usage,
    token_count,
)
from lmmprobe.schema.rows import RowChunk, RowSource, ScoreRows
from lmmprobe.schema.sample import (
    CHOICE_FORMULATIONS,
    YES_NO_READING,
    Formulation,
    Sample,
    Turn,
)
from lmmprobe.schema.score import FORMAT_HIT_STAGES, Score, Stage
from lmmprobe.schema.spec import FormulateConfig, InferenceMethod, MarkChoice, MarkStyle, RunSpec
from lmmprobe.schema.text import REPLACEMENT_CHARACTER, SafeText, lone_surrogate, safe_text
from lmmprobe.schema.video import FramePolicy, VideoFrame, VideoRef

__all__ = [
    "CHOICE_FORMULATIONS",
    "ERROR_TYPES",
    "FORMAT_HIT_STAGES",
    "MAX_REPLY_CHARS",
    "MAX_TOKEN_COUNT",
    "REPLACEMENT_CHARACTER",
    "YES_NO_READING",
    "BenchmarkTag",
    "ContentPart",
    "DecidedBy",
    "ErrorInfo",
    "FormulateConfig",
    "Formulation",
    "FramePolicy",
    "GenerationParams",
    "ImageRef",
    "InferenceMethod",
    "JudgeConfig",
    "Judgement",
    "MarkChoice",
    "MarkStyle",
    "Message",
    "Method",
    "Price",
    "PromptTemplate",
    "Request",
    "Response",
    "RowChunk",
    "RowSource",
    "RunSpec",
    "SafeText",
    "Sample",
    "Score",
    "ScoreRows",
    "Stage",
    "Turn",
    "Usage",
    "VideoFrame",
    "VideoRef",
    "lone_surrogate",
    "register_renderer",
    "safe_text",
    "token_count",
]
