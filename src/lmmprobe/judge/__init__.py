"""LLM judges: protocols (prompt and reading, as data and pure functions) and the judging step.

`lmmprobe.judge.protocol` defines what a judge protocol is and the `JUDGE_PROTOCOLS` registry;
`lmmprobe.judge.protocols` holds the official ones (one module per benchmark's released judge)
and lmmprobe's own generic ones. The step that asks judge models goes through the runner, the
executor and the store like any model's calls.
"""
