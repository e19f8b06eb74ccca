"""The web app over the store (``lmmprobe serve``): runs, samples, compare and HEMM's arena."""
