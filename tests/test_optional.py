"""The optional-dependency guard: modules come back, or the error names the install command."""

from __future__ import annotations

import json

import pytest

from lmmprobe._optional import install_hint, require


def test_require_returns_the_modules_in_order() -> None:
    mods = require("json", "pathlib", extra="hf", purpose="this test")
    assert mods[0] is json and mods[1].__name__ == "pathlib"


def test_missing_module_names_purpose_modules_and_install_command() -> None:
    with pytest.raises(ImportError) as info:
        require("json", "lmmprobe_no_such_module", extra="diffusion", purpose="the tiny thing")
    assert str(info.value) == (
        "the tiny thing needs json and lmmprobe_no_such_module "
        "(No module named 'lmmprobe_no_such_module'); run: pip install 'lmmprobe[diffusion]'"
    )
    assert isinstance(info.value.__cause__, ModuleNotFoundError)


def test_listing_and_hint() -> None:
    with pytest.raises(ImportError, match=r"^x needs lmmprobe_nope_1 \("):
        require("lmmprobe_nope_1", extra="hf", purpose="x")
    with pytest.raises(ImportError, match=r"needs a_1, b_2 and c_3 \("):
        require("a_1", "b_2", "c_3", extra="hf", purpose="x")
    assert install_hint("hf") == "pip install 'lmmprobe[hf]'"
    with pytest.raises(ValueError, match="at least one module"):
        require(extra="hf", purpose="x")
