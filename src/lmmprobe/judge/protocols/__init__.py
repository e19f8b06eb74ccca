"""Judge protocols, one module each, registering themselves in `JUDGE_PROTOCOLS`."""
