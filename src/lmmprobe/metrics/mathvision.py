r"""MathVision's answer reading and equality, as its released ``evaluation/`` code computes them.

MATH-V (Wang et al. 2024; mathllm/MATH-V ``evaluation/evaluate.py`` and ``evaluation/utils.py``)
reads a model's reply in three steps, each reproduced here with its quirks:

1. `mathvision_extract`: ``evaluate``'s own pass over the stripped reply (a lone option letter
   at its start or end; the number after the last ``is ``; the text after ``the answer is``
   and its kin, up to the line's or sentence's end, unless the reply has a ``\boxed{``), then
   ``find_math_answer`` (the first ``oxed{`` to the last ``}``, the text after ``=``, LaTeX
   clean-up by ``_strip_string``), then option marks ``(a)``/``{a}`` unwrapped.
2. `mathvision_equal`: ``is_equal``: lowercase; empty is never equal; equal when the stripped
   texts are; else tuples ``(a,b)`` evaluated element-wise; else both sides parsed by
   ``latex2sympy`` and evaluated, equal when they round to the same value at 2 decimals.
3. A reply is right when it equals the answer, or (a choice question) the chosen option's text.

``is_equal`` evaluates with Python's ``eval`` the text of the sympy expression that
``latex2sympy`` makes of a model's answer. lmmprobe never evaluates what a model wrote as code:
`_evaluate` reads that text with `ast` and computes only what such text holds (numbers, the
names of the ``math`` module and of a few builtins, arithmetic, comparisons, calls of those
functions), with Python's own operators and functions, so the values are the same; anything
else is an error, as ``eval`` gives for a name it does not know. Two departures, both where the
reference does not finish: a power whose exponent exceeds 10,000 in size, or a factorial above
10,000 (Python would compute for minutes or exhaust memory: ``2^{2^{100}}``), is an error (not
equal), and a side longer than 1,000 characters is not parsed (not equal).
``latex2sympy`` comes from the ``latex2sympy2`` package (``pip install 'lmmprobe[mathvision]'``),
imported when an answer first needs it.
"""

from __future__ import annotations

import ast
import builtins
import math
import operator
from collections.abc import Callable, Sequence
from typing import Any

__all__ = [
    "MATHVISION_MAX_LATEX",
    "MathVisionUnavailable",
    "mathvision_correct",
    "mathvision_equal",
    "mathvision_extract",
    "mathvision_find_answer",
]

MATHVISION_MAX_LATEX = 1000
"""The longest answer side `mathvision_equal` hands to ``latex2sympy`` (longer: not equal)."""

_MAX_EXPONENT = 10_000
_MAX_FACTORIAL = 10_000


class MathVisionUnavailable(RuntimeError):
    """``latex2sympy2`` is not installed, and an answer needs it."""


# --------------------------------------------------------------------------- reading


def _is_number(text: str) -> bool:
    # The reference's is_number: Python's float() accepts it ("1e3", " 7 ", "nan", "inf").
    try:
        float(text)
    except ValueError:
        return False
    return True


_FLAGS = ("the final answer is", "the answer is", "the correct answer is", "the answer should be")


def _after_flag(answer: str, flag: str) -> str:
    had = flag in answer
    answer = answer.split(flag)[-1].strip()
    if had:
        answer = answer.split("\n")[0].split(". ")[0]
    return answer


def _first_pass(response: str) -> str:
    """``evaluate``'s reading of the reply before ``find_math_answer``."""
    answer = response.strip()
    for c in "ABCDE":
        # Checked on the answer as each earlier letter left it (one that matched leaves "A").
        if (
            answer.endswith(f" {c}.")
            or answer.endswith(f" ({c}).")
            or answer.startswith(f"{c}\n")
            or answer.startswith(f"({c})\n")
            or answer.startswith(f"({c}) {c}\n")
        ):
            answer = c
    tail = answer.split("is ")[-1].rstrip(".")
    if _is_number(tail):
        answer = tail
    if "oxed{" not in answer:
        for flag in _FLAGS:
            answer = _after_flag(answer, flag)
            answer = _after_flag(answer, flag.replace("the", "The"))
    elif answer.count("oxed{") > 1:
        answer = "\\boxed{" + answer.split("oxed{")[-1]
    return answer


def _fix_fracs(text: str) -> str:
    r"""``_fix_fracs``: braces around a one-character numerator and denominator of ``\frac``."""
    parts = text.split("\\frac")
    out = parts[0]
    for part in parts[1:]:
        out += "\\frac"
        if part and part[0] == "{":
            out += part
            continue
        if len(part) < 2:
            return text
        a, b, rest = part[0], part[1], part[2:]
        out += "{" + a + "}{" + b + "}" + rest if b != "{" else "{" + a + "}" + b + rest
    return out


def _fix_a_slash_b(text: str) -> str:
    r"""``_fix_a_slash_b``: ``3/4`` (two integers written plainly) as ``\frac{3}{4}``."""
    pieces = text.split("/")
    if len(pieces) != 2:
        return text
    try:
        a, b = int(pieces[0]), int(pieces[1])
    except ValueError:
        return text
    if text != f"{a}/{b}":
        return text
    return "\\frac{" + str(a) + "}{" + str(b) + "}"


def _fix_sqrt(text: str) -> str:
    r"""``_fix_sqrt``: braces around a one-character argument of ``\sqrt``."""
    if "\\sqrt" not in text:
        return text
    parts = text.split("\\sqrt")
    out = parts[0]
    for part in parts[1:]:
        out += "\\sqrt{" + part[0] + "}" + part[1:] if part and part[0] != "{" else "\\sqrt" + part
    return out


def _strip_string(text: str) -> str:
    """``_strip_string``: MATH's LaTeX clean-up, in the reference's order."""
    for old, new in (
        ("\n", ""), ("\\!", ""), ("\\\\", "\\"), ("tfrac", "frac"), ("dfrac", "frac"),
        ("\\left", ""), ("\\right", ""), ("^{\\circ}", ""), ("^\\circ", ""), ("\\$", ""),
        ("$", ""),
    ):  # fmt: skip
        text = text.replace(old, new)
    text = text.split("\\text{ ")[0]  # units on the right
    text = text.replace("\\%", "")
    text = text.replace(" .", " 0.").replace("{.", "{0.")
    if not text:
        return text
    if text[0] == ".":
        text = "0" + text
    if len(text.split("=")) == 2:
        text = text.split("=")[-1]
    if len(text.split("\\approx")) == 2:
        text = text.split("\\approx")[-1]
    if "sqrt" in text:
        text = _fix_sqrt(text)
    text = text.replace(" ", "")
    if "sqrt" in text:  # as released: fractions are fixed only next to a square root
        text = _fix_fracs(text)
    if text == "0.5":
        text = "\\frac{1}{2}"
    return _fix_a_slash_b(text)


def _boxed(text: str) -> str | None:
    r"""``re.findall('oxed{(.*)}', s, re.S)[-1]`` in linear time: None where it finds nothing.

    The greedy, dot-all pattern matches once, from the first ``oxed{`` to the last ``}`` after
    it; the regular expression retried from every later ``oxed{`` when no ``}`` follows
    (quadratic in a reply repeating it).
    """
    start = text.find("oxed{")
    end = text.rfind("}")
    if start == -1 or end < start + len("oxed{"):
        return None
    return text[start + len("oxed{") : end]


def mathvision_find_answer(text: str) -> str:
    """``find_math_answer``: the boxed (or whole) answer, after ``=``, cleaned of LaTeX."""
    text = text.lower()
    if "{}" in text:
        text = text.replace("{}", "")
    boxed = _boxed(text)
    answer = text if boxed is None else boxed
    close, open_ = answer.find("}"), answer.find("{")
    if close != -1 and (open_ == -1 or close < open_):
        answer = answer.split("}")[0]
    answer = answer.split("=")[-1]
    answer = answer.split("\\approx")[-1]
    for old, new in (
        (" ", ""), ("\\,", ""), ("∞", "\\infty"), ("+\\infty", "\\infty"), ("\\\\", "\\"),
        ("\n", ""), ("\\text", ""), ("\\mbox", ""), ("bmatrix", "pmatrix"), ("\\left", ""),
        ("\\right", ""), ("^{\\circ}", ""), ("^\\circ", ""), ("{m}^3", ""), ("m^3", ""),
        ("{units}", ""), ("units", ""), ("{km}", ""), ("km", ""),
    ):  # fmt: skip
        answer = answer.replace(old, new)
    return _strip_string(answer)


def mathvision_extract(response: str) -> str:
    """The answer MathVision reads from a reply (``evaluate``'s ``model_answer``)."""
    answer = mathvision_find_answer(_first_pass(response))
    for letter in "abcde":
        answer = answer.replace(f"({letter})", letter)
    for letter in "abcde":
        answer = answer.replace("{" + letter + "}", letter)
    return answer.rstrip(".").lstrip(":").strip()


# --------------------------------------------------------------------------- equality

_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}  # fmt: skip
_UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {
    ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Not: operator.not_,
}  # fmt: skip
_COMPARE: dict[type[ast.cmpop], Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Gt: operator.gt, ast.GtE: operator.ge,
}  # fmt: skip
# What the reference's eval can name in such text: `from math import *` and the builtins.
_NAMES: dict[str, Any] = {
    **{k: v for k, v in vars(math).items() if not k.startswith("_")},
    **{k: getattr(builtins, k) for k in ("abs", "max", "min", "pow", "round", "int", "float")},
}


def _size(value: Any) -> float:
    return abs(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


def _node(node: ast.AST) -> Any:
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float | complex | bool):
        return node.value
    if isinstance(node, ast.Name) and node.id in _NAMES:
        return _NAMES[node.id]
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _node(node.left), _node(node.right)
        if isinstance(node.op, ast.Pow) and _size(right) > _MAX_EXPONENT:
            raise ValueError("exponent too large to evaluate")
        return _BINARY[type(node.op)](left, right)
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_node(node.operand))
    if isinstance(node, ast.Compare) and all(type(op) in _COMPARE for op in node.ops):
        left = _node(node.left)
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            right = _node(right_node)
            if not _COMPARE[type(op)](left, right):
                return False
            left = right
        return True
    if isinstance(node, ast.Call) and not node.keywords:
        func = _node(node.func)
        args = [_node(a) for a in node.args]
        if func in (math.factorial, math.perm, math.comb) and any(
            _size(a) > _MAX_FACTORIAL for a in args
        ):
            raise ValueError("factorial too large to evaluate")
        if func is pow and len(args) >= 2 and _size(args[1]) > _MAX_EXPONENT:
            raise ValueError("exponent too large to evaluate")
        return func(*args)
    if isinstance(node, ast.Tuple | ast.List):
        return tuple(_node(e) for e in node.elts)
    raise ValueError(f"cannot evaluate {type(node).__name__}")


def _evaluate(text: str) -> Any:
    """The value Python's ``eval`` gives `text` (the text of a sympy expression), or raises."""
    return _node(ast.parse(text, mode="eval").body)


def _latex2sympy() -> Callable[[str], Any]:
    try:
        from latex2sympy2 import latex2sympy
    except ImportError as exc:
        raise MathVisionUnavailable(
            "MathVision's answer equality parses LaTeX with latex2sympy2: "
            "pip install 'lmmprobe[mathvision]'"
        ) from exc
    return latex2sympy  # type: ignore[no-any-return]


def _value(text: str) -> Any:
    """``round(eval(str(latex2sympy(text))), 2)``, without eval; raises where it would."""
    if len(text) > MATHVISION_MAX_LATEX:
        raise ValueError("too long to parse")
    return round(_evaluate(str(_latex2sympy()(text))), 2)


def _eval_tuple(text: str) -> str:
    """``eval_tuple``: a tuple or list of two or more items with each item evaluated."""
    items = text[1:-1].split(",")
    try:
        if text[0] == "(" and text[-1] == ")" and len(items) > 1:
            return "(" + ",".join(_item(i) for i in items) + ")"
        if text[0] == "[" and text[-1] == "]" and len(items) > 1:
            return "[" + ",".join(_item(i) for i in items) + "]"
    except MathVisionUnavailable:
        raise
    except Exception:  # the reference returns the text as it was on any failure
        return text
    return text


def _item(item: str) -> str:
    if "infty" in item or item in ("a", "-a"):
        return item
    return str(_value(item))


def mathvision_equal(a: str, b: str) -> bool:
    """``is_equal(a, b)``: whether two answers are the same to MathVision.

    Raises:
        MathVisionUnavailable: A comparison needs ``latex2sympy2`` and it is not installed.

    """
    a, b = a.lower(), b.lower()
    if a.replace(" ", "") == "" or b.replace(" ", "") == "":
        return False
    if b.strip() == a.strip():
        return True
    a, b = _eval_tuple(a), _eval_tuple(b)
    if b == a:
        return True
    try:
        return bool(_value(b) == _value(a))
    except MathVisionUnavailable:
        raise
    except Exception:  # the reference counts any failure as not equal
        return False


def mathvision_correct(response: str, answer: str, options: Sequence[str]) -> bool:
    """MathVision's verdict: the reply's answer equals the answer or the chosen option's text."""
    extracted = mathvision_extract(response)
    value = options[ord(answer) - ord("A")] if options else ""
    return mathvision_equal(answer, extracted) or mathvision_equal(value, extracted)
