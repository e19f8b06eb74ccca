"""An installed plugin package, as pip lays it out, for tests that run lmmprobe with plugins."""

from __future__ import annotations

import os
import shutil
from pathlib import Path


def install_plugin(
    root: Path, name: str, version: str, source: str, entry_points: dict[str, dict[str, str]]
) -> Path:
    """Install distribution `name` at `version` under `root`: one module and its dist-info.

    What pip writes for a pyproject declaring ``[project.entry-points."GROUP"]`` tables: the
    module ``NAME.py`` (``-`` as ``_``) holding `source`, and ``NAME-VERSION.dist-info`` with
    its METADATA and entry_points.txt (`entry_points`: group -> entry name -> ``module:attr``).
    Installing again (another version) replaces both, as an upgrade does.

    Returns:
        `root`, the folder to put on ``PYTHONPATH`` (see `plugin_path`).

    """
    module = name.replace("-", "_")
    root.mkdir(parents=True, exist_ok=True)
    for old in root.glob(f"{module}-*.dist-info"):
        shutil.rmtree(old)
    (root / f"{module}.py").write_text(source, encoding="utf-8")
    info = root / f"{module}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n", encoding="utf-8"
    )
    tables = (
        f"[{group}]\n" + "".join(f"{entry} = {target}\n" for entry, target in entries.items())
        for group, entries in entry_points.items()
    )
    (info / "entry_points.txt").write_text("\n".join(tables), encoding="utf-8")
    return root


def plugin_path(root: Path) -> dict[str, str]:
    """The environment a console run needs to find the plugins under `root`.

    Bytecode is not written: a module rewritten within the same second at the same size would
    otherwise be read from its stale cache.
    """
    return {
        "PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")]),
        "PYTHONDONTWRITEBYTECODE": "1",
    }
