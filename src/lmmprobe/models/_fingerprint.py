"""A cheap fingerprint of a local checkpoint folder, shared by every backend that loads one."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

__all__ = ["weights_fingerprint"]


def weights_fingerprint(folder: Path) -> str | None:
    """Cheap fingerprint of local weights: config plus name, size, head and tail of each file."""
    if not folder.is_dir():
        return None
    h = hashlib.sha256()
    for f in sorted(folder.iterdir()):
        if not f.is_file() or not f.name.endswith((".safetensors", ".bin", ".json")):
            continue
        size = f.stat().st_size
        h.update(f"{f.name}:{size}:".encode())
        with f.open("rb") as fh:
            h.update(fh.read(1 << 20))
            if size > 2 << 20:
                fh.seek(-(1 << 20), os.SEEK_END)
                h.update(fh.read())
    return h.hexdigest()[:32]
