"""Leak-free synthetic benchmarks (Dysca): metadata → prompt → image → questions."""
