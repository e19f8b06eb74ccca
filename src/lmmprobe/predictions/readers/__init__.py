"""Readers of other tools' prediction files, one module per layout.

Each module registers itself in `lmmprobe.predictions.imported.READERS`.
"""
