"""Run MMIU's inference script on the parity questions; write ``prompts.json``.

OpenGVLab/MMIU @ e8963c2 ``VLMEvalKit/test_qwen3_vl.py`` (the authors' OpenAI-client inference
script; its ``process_single_item`` builds the prompt as MMIUBenchmark/MMIU @ 913f5c1
``VLMEvalKit/test_interlvl1.5.py`` does) is run as a script, unmodified, in a temporary folder
holding the questions of ``dataset.json`` as ``all.json`` and their images where
``input_image_path`` points (one-colour PNGs: image K of question N is
``(N * 5 % 256, 40 * K % 256, 90)``, as ``test_mmiu.py`` writes them). A scripted ``openai``
module first on its path records each request: the text part and, for each image part, the
image's K (read back from the JPEG it sent by its green value), in the order sent, and replies
``answers.json``'s answer. Recorded per tag: ``text``, ``images`` (the Ks, in order) and
``parts`` (the content parts' types, in order).

    git clone https://github.com/OpenGVLab/MMIU /path/to/MMIU
    git -C /path/to/MMIU show e8963c252b3935d452959c60180e066793f3dbef:VLMEvalKit/test_qwen3_vl.py > /tmp/test_qwen3_vl.py
    python tests/data/benchmarks/mmiu_parity/make_prompts.py /tmp/test_qwen3_vl.py
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from PIL import Image

HERE = Path(__file__).parent
COMMIT = "e8963c252b3935d452959c60180e066793f3dbef"

STUB = """
import base64, io, json, os, re
from PIL import Image

_ANSWERS = json.load(open(os.environ["MMIU_PARITY_ANSWERS"], encoding="utf-8"))
_LOG = os.environ["MMIU_PARITY_LOG"]


class _Message:
    def __init__(self, content):
        self.content = content


class _Choice:
    def __init__(self, content):
        self.message = _Message(content)


class _Response:
    def __init__(self, content):
        self.choices = [_Choice(content)]


class _Completions:
    def create(self, model, messages, max_tokens, temperature):
        parts = messages[0]["content"]
        text = [p["text"] for p in parts if p["type"] == "text"][-1]
        greens = []
        for p in parts:
            if p["type"] == "image_url":
                data = base64.b64decode(p["image_url"]["url"].split(",", 1)[1])
                greens.append(Image.open(io.BytesIO(data)).convert("RGB").getpixel((4, 4))[1])
        tag = re.search(r"#(t[0-9]+)", text).group(1)
        with open(_LOG, "a", encoding="utf-8") as log:
            log.write(json.dumps({"tag": tag, "text": text, "greens": greens,
                                  "parts": [p["type"] for p in parts], "model": model,
                                  "max_tokens": max_tokens, "temperature": temperature}) + "\\n")
        return _Response(_ANSWERS[tag])


class _Chat:
    completions = _Completions()


class OpenAI:
    def __init__(self, base_url=None, api_key=None):
        self.chat = _Chat()
"""


def _png(color: tuple[int, int, int]) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (8, 8), color).save(buf, format="PNG")
    return buf.getvalue()


def main(script: Path) -> None:
    rows = json.loads((HERE / "dataset.json").read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for n, row in enumerate(rows):
            for k, path in enumerate(row["input_image_path"]):
                (work / path).parent.mkdir(parents=True, exist_ok=True)
                (work / path).write_bytes(_png((n * 5 % 256, 40 * k % 256, 90)))
        (work / "all.json").write_text(json.dumps(rows), encoding="utf-8")
        (work / "stub").mkdir()
        (work / "stub" / "openai.py").write_text(STUB, encoding="utf-8")
        env = {**os.environ, "PYTHONPATH": str(work / "stub"), "MODEL": "Mantis",
               "MMIU_PARITY_ANSWERS": str(HERE / "answers.json"),
               "MMIU_PARITY_LOG": str(work / "calls.jsonl")}  # fmt: skip
        subprocess.run([sys.executable, str(script), "--json_path", "all.json", "--output-dir",
                        str(work / "results")], cwd=work, env=env, check=True,
                       capture_output=True)  # fmt: skip
        prompts = {}
        for line in (work / "calls.jsonl").read_text(encoding="utf-8").splitlines():
            call = json.loads(line)
            assert call["model"] == "Mantis", call
            # Image K was written with green 40 * K: read back the nearest (JPEG moves it a bit).
            ks = [min(range(7), key=lambda k, g=g: abs(40 * k - g)) for g in call["greens"]]
            prompts[call["tag"]] = {"text": call["text"], "images": ks, "parts": call["parts"],
                                    "max_tokens": call["max_tokens"],
                                    "temperature": call["temperature"]}  # fmt: skip
    out = {
        "source": f"OpenGVLab/MMIU@{COMMIT} VLMEvalKit/test_qwen3_vl.py",
        "rows": {t: prompts[t] for t in sorted(prompts, key=lambda t: int(t[1:]))},
    }
    (HERE / "prompts.json").write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
