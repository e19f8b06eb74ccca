"""Write the ReForm-Eval JSON fixture the numbers-invariant test runs (deterministic).

A small file in ReForm-Eval's released layout: single-choice, true/false (yes/no options), and
caption entries with base64 and path images, so every formulation the loader reads is covered.
"""

from __future__ import annotations

import base64
import io
import json
import random
import sys
from pathlib import Path

from PIL import Image

COLOURS = {
    "red": (220, 30, 30),
    "green": (30, 180, 60),
    "blue": (40, 60, 220),
    "yellow": (240, 220, 40),
}


def _png(colour: tuple[int, int, int]) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (24, 24), colour).save(buf, format="PNG")
    return buf.getvalue()


def write(folder: Path) -> Path:
    """Write ``folder/reform.json`` (and its images) and return the JSON path."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = random.Random(7)
    names = sorted(COLOURS)
    entries = []
    for i in range(40):
        colour = names[i % len(names)]
        image_b64 = base64.b64encode(_png(COLOURS[colour])).decode()
        if i % 3 == 0:
            options = rng.sample(names, 4)
            entries.append(
                {
                    "sample_id": i,
                    "image": image_b64,
                    "question": "What colour is the image?",
                    "answer": options.index(colour),
                    "answer_options": options,
                }
            )
        elif i % 3 == 1:
            asked = rng.choice(names)
            entries.append(
                {
                    "sample_id": i,
                    "image": image_b64,
                    "question": f"Is the image {asked}?",
                    "answer": 0 if asked == colour else 1,
                    "answer_options": ["yes", "no"],
                }
            )
        else:
            refs = [f"a {colour} square", f"{colour} image", "a plain colour"]
            entries.append(
                {
                    "sample_id": i,
                    "image": image_b64,
                    "question": "Describe the image.",
                    "references": refs,
                    "answer": refs[0],
                }
            )
    path = folder / "reform.json"
    path.write_text(json.dumps(entries))
    return path


if __name__ == "__main__":
    print(write(Path(sys.argv[1])))
