"""lmmprobe's version, in a module that imports nothing.

Any layer may read it (manifests record it) without importing the top-level package, whose
``__init__`` imports the whole public API.
"""

__version__ = "0.1.0"
