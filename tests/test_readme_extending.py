"""README's "Extending lmmprobe" examples run as written: each file plus its decorator is enough.

The Python blocks of that section are written to files under their own names (the comment on
their first line) and used in a fresh interpreter, so the registrations never leak into other
tests: a matcher, a metric, a data source and a model backend drive one real evaluation.
"""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

from PIL import Image

README = Path(__file__).parents[1] / "README.md"


def extending_blocks() -> dict[str, str]:
    text = README.read_text(encoding="utf-8")
    section = text.split("## Extending lmmprobe", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    named = {}
    for block in blocks:
        first = block.splitlines()[0]
        assert first.startswith("# "), f"README block without a file name: {first!r}"
        named[Path(first[2:].strip()).name] = block
    return named


def test_readme_extension_examples_work_together(tmp_path: Path) -> None:
    blocks = extending_blocks()
    assert set(blocks) == {
        "my_matchers.py", "strict_accuracy.py", "yes_rate.py", "my_source.py", "echo_backend.py"
    }  # fmt: skip
    for name, code in blocks.items():
        (tmp_path / name).write_text(code, encoding="utf-8")
    Image.new("RGB", (8, 8), "red").save(tmp_path / "red.png")
    (tmp_path / "questions.csv").write_text(
        "id,image,question,a,b,answer\n"
        "q1,red.png,What colour?,red,blue,0\n"
        "q2,red.png,What colour?,blue,red,1\n"
        "q3,red.png,What colour?,red,blue,2\n",
        encoding="utf-8",
    )
    script = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(tmp_path)!r})
        import echo_backend, my_matchers, my_source, strict_accuracy, yes_rate
        from lmmprobe import RunSpec, evaluate

        ev = evaluate(RunSpec(
            models=["echo:demo"], data="csvq:{tmp_path / "questions.csv"}",
            db="{tmp_path / "store.db"}", out="{tmp_path / "out"}",
            formulate={{"matcher": "bare-mark"}},
        ))
        metrics = ev.results.models["echo:demo"].metrics
        print("accuracy", metrics["accuracy"].value, "yes_rate", metrics["yes_rate"].value)
        strict, acc = metrics["strict_accuracy"], metrics["accuracy"]
        print("strict", strict.value, "same interval", (strict.low, strict.high) == (acc.low, acc.high))
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    # q3 is refused with its line and field; echo answers "(A)": right on q1, wrong on q2.
    assert "accuracy 0.5 yes_rate 0.0" in done.stdout, done.stdout
    # Both answers named an option by its mark: strict accuracy is accuracy, interval and all.
    assert "strict 0.5 same interval True" in done.stdout, done.stdout
