"""lmmprobe's tests: a regular package, so an installed distribution's top-level ``tests``
(latex2sympy2 installs one) cannot shadow it."""
