"""MATH-Vision's equality: the values of its eval without evaluating model text, in bounded time.

Parity with the released code is in tests/parity/test_mathvision.py; these are the cases the
released code cannot be run on (it would not finish, or would run what a model wrote).
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import time

import pytest

from lmmprobe.metrics import mathvision
from lmmprobe.metrics.mathvision import MATHVISION_MAX_LATEX, mathvision_equal

needs_latex2sympy = pytest.mark.skipif(
    importlib.util.find_spec("latex2sympy2") is None,
    reason="latex2sympy2 is not installed (lmmprobe[mathvision])",
)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1/2", 0.5),
        ("2**3", 8),
        ("sqrt(2)", 2**0.5),
        ("pi/4", 0.7853981633974483),
        ("-(3 + 4)*2", -14),
        ("2 > 1", True),
        ("(1, 2)", (1, 2)),
        ("factorial(5)", 120),
        ("e", 2.718281828459045),
    ],
)
def test_sympy_text_gets_the_value_eval_gives(text: str, value: object) -> None:
    assert mathvision._evaluate(text) == value
    assert eval(text, vars(__import__("math"))) == value  # what the reference's eval gives


@pytest.mark.parametrize(
    "text",
    [
        "__import__('os').system('true')",
        "E",  # sympy's e: not a name the reference's eval knows either
        "x + 1",
        "open('f')",
        "(lambda: 1)()",
        "[i for i in (1, 2)]",
        "sqrt(2).real",
        "2**(2**100)",
        "factorial(10**9)",
        "pow(2, 10**9)",
    ],
)
def test_anything_else_is_an_error_never_run(text: str) -> None:
    started = time.monotonic()
    with pytest.raises((ValueError, TypeError)):
        mathvision._evaluate(text)
    assert time.monotonic() - started < 5


@needs_latex2sympy
def test_answers_whose_value_the_reference_never_finishes_are_not_equal() -> None:
    started = time.monotonic()
    assert not mathvision_equal("1", "2^{2^{100}}")
    assert not mathvision_equal("2^{2^{100}}", "2^{2^{101}}")
    assert mathvision_equal("2^{2^{100}}", " 2^{2^{100}} ")  # equal as text first, as released
    assert not mathvision_equal("1", "1" + "+0" * MATHVISION_MAX_LATEX)
    assert time.monotonic() - started < 30
    # Within the bounds the values are compared as released: at 2 decimals.
    assert mathvision_equal("\\frac{1}{2}", "0.5")
    assert mathvision_equal("\\sqrt{2}", "1.414")
    assert not mathvision_equal("\\sqrt{2}", "1.42")
    assert mathvision_equal("(1,2)", "(1, 2)")


def test_without_latex2sympy2_the_error_names_the_install() -> None:
    # A separate interpreter where latex2sympy2 cannot be imported (as without the extra).
    code = (
        "import sys; sys.modules['latex2sympy2'] = None\n"
        "from lmmprobe.metrics.mathvision import mathvision_equal\n"
        "assert mathvision_equal('7', ' 7 ')  # equal as text: no parsing needed\n"
        "try:\n    mathvision_equal('1/2', '0.5')\n"
        "except RuntimeError as e:\n    print(e)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "pip install 'lmmprobe[mathvision]'" in done.stdout
