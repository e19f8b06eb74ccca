"""OCRBench v2's structured answers: tables (TEDS), charts, key-value dicts, documents (STEDS).

Reproduces ``eval_scripts/TEDS_metric.py`` at `OCRBENCH_V2_COMMIT`: PubTabNet's TEDS (the tree
edit distance of two HTML tables by APTED, a cell's rename cost the normalized Levenshtein
distance of its tokens, over the larger table's node count), the markdown and dict-to-table
conversions feeding it, the parsing of a model's dict answer (JSON, then a Python literal, then
a ``key: value`` regular expression), the key information F1, and STEDS (a Zhang-Shasha tree
edit distance of a document's headings and lines). The libraries are those of the reference:
``lxml`` parses the HTML, ``apted`` and ``zss`` compute the tree distances; the Levenshtein
distance is rapidfuzz's (the same unit-cost distance ``distance.levenshtein`` gives).
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sized
from dataclasses import dataclass, field
from itertools import product
from typing import Any

from rapidfuzz.distance import Levenshtein

from lmmprobe.metrics.text import MetricUnavailable

__all__ = [
    "KEY_VALUE",
    "MAX_COMBINATIONS",
    "MAX_TREE_NODES",
    "MAX_TREE_PAIRS",
    "TreeTooLarge",
    "compute_f1_score",
    "convert_markdown_table_to_html",
    "convert_str_to_dict",
    "convert_str_to_multi_dict",
    "dict_to_html",
    "doc_parsing_evaluation",
    "generate_combinations",
    "html_table_body",
    "key_values",
    "teds",
    "wrap_html_table",
]

_EXTRA = "pip install 'lmmprobe[ocrbench]'"

MAX_TREE_PAIRS = 250_000
"""The most node pairs (answer's tree x reference's) a tree edit distance is computed over.

APTED (TEDS) and Zhang-Shasha (STEDS), in pure Python, take about 50 and 100 microseconds a
node pair: a 200-line document against a 200-line reference about 4 s, but a runaway answer
of 800 lines several minutes, and one of thousands of table rows hours. OCRBench v2's
references are a page (tens to a few hundred nodes), so every answer of a comparable size is
scored exactly; past the bound the scripts' score is not computed (`TreeTooLarge`: the answer
scores 0 with a warning, as where the scripts stop). Where the answer's tree has R times the
reference's nodes, the scripts' score lies within 1/R of 0 (the distance is at least the
difference of the node counts, at most their sum)."""

MAX_TREE_NODES = 4_000
"""The most nodes either tree may have: APTED's and the document tree's building take time
quadratic in one tree's nodes alone (a 6,000-node table against a one-row reference: 6 s)."""

MAX_COMBINATIONS = 4_096
"""The most combinations of a key information reference's listed values that are tried."""


class TreeTooLarge(ValueError):
    """An answer (or reference) past `MAX_TREE_NODES` or `MAX_TREE_PAIRS` for its tree distance."""


def _check_pairs(what: str, answer_nodes: int, reference_nodes: int) -> None:
    pairs = answer_nodes * reference_nodes
    if max(answer_nodes, reference_nodes) > MAX_TREE_NODES:
        raise TreeTooLarge(
            f"{what} of {answer_nodes:,} nodes against a reference of {reference_nodes:,}: "
            f"past the bound of {MAX_TREE_NODES:,} nodes a tree (minutes of tree edit "
            "distance); not computed"
        )
    if pairs > MAX_TREE_PAIRS:
        raise TreeTooLarge(
            f"{what} of {answer_nodes:,} nodes against a reference of {reference_nodes:,}: "
            f"{pairs:,} node pairs, past the bound of {MAX_TREE_PAIRS:,} "
            "(minutes of tree edit distance); not computed"
        )


@dataclass
class _Node:
    """One node of APTED's tree: a tag, a cell's span and tokens (``TableTree``)."""

    tag: str
    colspan: int | None = None
    rowspan: int | None = None
    content: list[str] | None = None
    children: list[_Node] = field(default_factory=list)


def _tokens(node: Any, out: list[str]) -> None:
    """``TEDS.tokenize``: the tag, the text's characters, the children, the close, the tail."""
    out.append(f"<{node.tag}>")
    if node.text is not None:
        out.extend(node.text)
    for child in node:
        _tokens(child, out)
    if node.tag != "unk":
        out.append(f"</{node.tag}>")
    if node.tag != "td" and node.tail is not None:
        out.extend(node.tail)


def _tree(node: Any) -> _Node:
    """``TEDS.load_html_tree``: a ``td`` is a leaf with its tokens (less its own tags)."""
    if node.tag == "td":
        cell: list[str] = []
        _tokens(node, cell)
        return _Node(
            "td", int(node.attrib.get("colspan", "1")), int(node.attrib.get("rowspan", "1")),
            cell[1:-1],
        )  # fmt: skip
    return _Node(node.tag, children=[_tree(child) for child in node])


def _rename(a: _Node, b: _Node) -> float:
    """``CustomConfig.rename``."""
    if a.tag != b.tag or a.colspan != b.colspan or a.rowspan != b.rowspan:
        return 1.0
    if a.tag == "td" and (a.content or b.content):
        x, y = a.content or [], b.content or []
        return Levenshtein.distance(x, y) / max(len(x), len(y))
    return 0.0


def teds(pred: str, true: str) -> float:
    """``TEDS().evaluate``: 1 - APTED distance / larger node count of the two ``body/table``.

    Raises:
        MetricUnavailable: ``lxml`` or ``apted`` is not installed.

    """
    try:
        from apted import APTED, Config
        from lxml import html
    except ImportError as exc:  # pragma: no cover - the extra is installed in tests
        raise MetricUnavailable(f"OCRBench v2's TEDS needs lxml and apted: {_EXTRA}") from exc
    if not pred or not true:
        return 0.0
    parser = html.HTMLParser(remove_comments=True, encoding="utf-8")
    pred_root = html.fromstring(pred, parser=parser)
    true_root = html.fromstring(true, parser=parser)
    pred_tables, true_tables = pred_root.xpath("body/table"), true_root.xpath("body/table")
    if not pred_tables or not true_tables:
        return 0.0
    p, t = pred_tables[0], true_tables[0]
    p_nodes, t_nodes = len(p.xpath(".//*")), len(t.xpath(".//*"))
    _check_pairs("a table", p_nodes + 1, t_nodes + 1)
    n_nodes = max(p_nodes, t_nodes)

    class _Config(Config):  # type: ignore[misc]
        def rename(self, a: _Node, b: _Node) -> float:
            return _rename(a, b)

    distance = APTED(_tree(p), _tree(t), _Config()).compute_edit_distance()
    return 1.0 - float(distance) / n_nodes


def _cells_html(rows: list[list[str]]) -> str:
    """``convert_table_to_html_str``: rows of cells in one ``<table>``, newlines removed."""
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f"<html><body><table>{body}</table></body></html>".replace("\n", "")


def convert_markdown_table_to_html(markdown: str) -> str:
    """``convert_markdown_table_to_html``: the header row and the rows after the rule.

    The script strips the characters of ``'```markdown'`` (not the word) from both ends.
    """
    # The script's str.strip of a character set, kept as it is.
    lines = markdown.strip("```markdown").strip("```").strip().split("\n")  # noqa: B005
    rows = []
    for line in [lines[0], *lines[2:]]:
        rows.append([c.strip() if set(c) != {" "} else " " for c in line.strip().split("|")[1:-1]])
    return _cells_html(rows)


def dict_to_html(data: Mapping[Any, Any]) -> str:
    """``dict_to_html``: a two-column table, each value's characters joined by spaces."""
    rows = "".join(
        f"  <tr><td>{k}</td><td>{' '.join(v if isinstance(v, str) else str(v))}</td></tr>\n"
        for k, v in data.items()
    )
    return f"<html><body><table>\n{rows}</table></body></html>"


def wrap_html_table(table: str) -> str:
    """``wrap_html_table``: the missing ``<table>``, ``<body>`` and ``<html>`` tags added."""
    table = table.replace("\n", "")
    has_open, has_close = "<table" in table, "</table>" in table
    if has_open and not has_close:
        table += "</table>"
    elif not has_open and has_close:
        table = "<table>" + table
    elif not has_open and not has_close:
        table = f"<table>{table}</table>"
    if "<body>" not in table:
        table = f"<body>{table}</body>"
    if "<html>" not in table:
        table = f"<html>{table}</html>"
    return table


def html_table_body(predict: str) -> str | None:
    """eval.py's cut of an HTML table answer.

    From ``<body`` (else ``<table``) on, newlines removed; None when neither is there.
    """
    flat = predict.replace("\n", "")
    for tag in ("<body", "<table"):
        at = flat.find(tag)
        if at >= 0:
            return flat[at:]
    return None


_FENCE = r"```(?:python|json)?\n(.*?)\n```"
"""The scripts' fenced block (``re.DOTALL | re.IGNORECASE``), found by `fenced_blocks`."""
_OPENING = re.compile(r"```(?:python|json)?\n", re.IGNORECASE)


def fenced_blocks(text: str) -> Iterator[str]:
    """What ``re.finditer(_FENCE, text, re.DOTALL | re.IGNORECASE)`` gives, in linear time.

    The engine tries each opening (three backticks, a tag, a newline) in turn and scans the
    rest of the text for a closing (a newline, three backticks): an answer of an opening and
    an ``x`` repeated, which never closes, took time quadratic in its length (100,000
    characters 16 s, a capped answer of 1 MB about half an hour, twice for a key information
    answer; re-test 17). An opening is found without that scan (there is at most one at a
    place), and a match is the first opening that ends before the text's last closing, up to
    the first closing after it; an opening further on ends further on.
    """
    last = text.rfind("\n```")
    at = 0
    while (opening := _OPENING.search(text, at)) is not None and opening.end() <= last:
        close = text.find("\n```", opening.end())
        yield text[opening.end() : close]
        at = close + 4


KEY_VALUE = r"[\"']?([\w\s]+)[\"']?\s*[:=]\s*[\"']?([^\n,\"'{}]+)[\"']?"
"""``convert_str_to_dict``'s last resort, the pairs `key_values` finds as ``re.findall`` would."""
_RUN = re.compile(r"[\w\s]+")
_SPACES = re.compile(r"\s*")
_VALUE = re.compile(r"\s*[\"']?([^\n,\"'{}]+)[\"']?")


def _colon(text: str, end: int) -> int:
    """Where the ``[:=]`` after a key ending at `end` is (an optional quote and spaces first)."""
    if end < len(text) and text[end] in ":=":
        return end
    if end < len(text) and text[end] in "\"'":
        at = _SPACES.match(text, end + 1)
        if at is not None and at.end() < len(text) and text[at.end()] in ":=":
            return at.end()
    return -1


def key_values(text: str) -> list[tuple[str, str]]:
    """``re.findall(KEY_VALUE, text)`` in time linear in the text.

    The pattern's key is a greedy run of word and space characters that also matches the space
    before the colon, so the regular expression engine rescans the rest of a long run from each
    of its characters (cubic in a long run of words without a colon). The same matches come from
    each run's end computed once: an attempt at a position succeeds exactly when the run starting
    there (after an optional quote) is followed by the colon and a value, with the whole run as
    the key; the value part is the pattern's own, matched once per colon.
    """
    ends = list(range(len(text)))
    for run in _RUN.finditer(text):
        ends[run.start() : run.end()] = [run.end()] * (run.end() - run.start())
    colons: dict[int, int] = {}
    values: dict[int, tuple[str, int] | None] = {}
    found, at = [], 0
    while at < len(text):
        start = at + 1 if text[at] in "\"'" else at
        if start < len(text) and ends[start] > start:
            end = ends[start]
            colon = colons.setdefault(end, _colon(text, end))
            if colon >= 0:
                if colon not in values:
                    m = _VALUE.match(text, colon + 1)
                    values[colon] = (m.group(1), m.end()) if m else None
                value = values[colon]
                if value is not None:
                    found.append((text[start:end], value[0]))
                    at = value[1]
                    continue
        at += 1
    return found


_FAILED = object()


def _literal(text: Any) -> Any:
    """``ast.literal_eval``; `_FAILED` for what it refuses (or a too deep or too large text)."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return _FAILED


def convert_str_to_dict(predict: str) -> dict[str, str]:
    """``convert_str_to_dict``: the answer's dict, every key and value as stripped text."""
    match = next(fenced_blocks(predict), None)
    content = match if match is not None else predict.strip()
    data: Any = None
    try:
        data = json.loads(content)
    except (ValueError, RecursionError):
        data = _literal(content)
        if data is _FAILED:
            data = {}
            for key, value in key_values(content):
                data[key.strip()] = value.strip()
        elif not isinstance(data, dict):
            # Another literal: the script's pattern then writes into it and fails, or finds
            # nothing and fails on .items(): {} either way.
            return {}
    if not data:
        return {}
    try:
        return {k.strip(): str(v).strip() for k, v in data.items()}
    except (AttributeError, TypeError, RecursionError):
        # A JSON list, number or text, or keys that are not text: the script returns {}.
        return {}


_ASSIGNMENT = re.compile(r"^\s*\w+\s*=\s*")
_COMMENT = re.compile(r"#.*")


def convert_str_to_multi_dict(predict: str) -> dict[Any, Any]:
    """``convert_str_to_multi_dict``.

    The longest fenced block (else the answer), less a leading ``name =``, less every ``#`` to
    its line's end, cut after the last ``}``, read as a Python dict literal; {} for anything
    else.
    """
    blocks = list(fenced_blocks(predict))
    content = max(blocks, key=len) if blocks else predict.strip()
    content = _COMMENT.sub("", _ASSIGNMENT.sub("", content.strip(), count=1))
    end = content.rfind("}")
    if end != -1:
        content = content[: end + 1]
    data = _literal(content)
    return data if isinstance(data, dict) else {}


def generate_combinations(answer: Any) -> list[dict[Any, Any]]:
    """``generate_combinations``: one dict per choice of each key's listed values.

    A text answer is read as JSON (its surrounding ``"`` stripped), else as a Python literal
    (twice), and a key's single value counts as a list of one; a dict answer's values must be
    lists already.

    Raises:
        ValueError: A text answer that is not a dict (the script stops there too).

    """
    if isinstance(answer, dict):
        keys = list(answer)
        _check_combinations(answer.values())
        return [dict(zip(keys, combo, strict=True)) for combo in product(*answer.values())]
    text = str(answer).strip('"')
    try:
        parsed = json.loads(text)
    except ValueError:
        parsed = _literal(text)
        if parsed is not _FAILED and not isinstance(parsed, dict):
            # Read again (a dict written as a quoted text); a non-text fails that reading.
            parsed = _literal(parsed)
        if parsed is _FAILED:
            # The script prints that it cannot parse the answer and returns {} (no combination).
            return []
    if not isinstance(parsed, dict):
        raise ValueError(f"the answer is not a dict: {text[:80]!r}")
    keys = list(parsed)
    values = [v if isinstance(v, list) else [v] for v in parsed.values()]
    _check_combinations(values)
    return [dict(zip(keys, combo, strict=True)) for combo in product(*values)]


def _check_combinations(values: Iterable[Any]) -> None:
    """Refuse a reference whose listed values combine past `MAX_COMBINATIONS`.

    The scripts' product of 40 keys of two values each is 2**40 dicts: it never ends.
    """
    total = 1
    for v in values:
        # What `product` iterates: a list's items, and as well a text's characters or a
        # dict's keys (a reference dict with a text value: 12 keys of 10 characters were 10**12
        # dicts, re-test 17); a value it cannot iterate fails there, as in the scripts.
        total *= len(v) if isinstance(v, Sized) else 1
        if total > MAX_COMBINATIONS:
            raise ValueError(
                f"the reference's listed values combine into more than {MAX_COMBINATIONS:,} "
                "dicts; not scored"
            )


def _kie_norm(value: Any) -> Any:
    return value.lower().strip().replace("\n", " ").replace(" ", "") if value else value


def compute_f1_score(preds: Mapping[str, Any], gts: Mapping[Any, Any]) -> float:
    """``compute_f1_score``.

    The mean over the keys of either dict of 1 for equal values (lower case, spaces removed),
    else 0; 0 when no key counts.
    """
    scores = []
    for key in set(preds) | set(gts):
        pred, gt = _kie_norm(preds.get(key)), _kie_norm(gts.get(key))
        if pred is None and gt is None:
            continue
        scores.append(1.0 if pred is not None and gt is not None and pred == gt else 0.0)
    return sum(scores) / len(scores) if scores else 0


_CLEAN = (
    (re.compile(r"<bos>|<eos>|<pad>|<unk>"), ""),
    (re.compile(r"\s##(\S)"), r"\1"),
    (re.compile(r"\\\s"), r"\\"),
    (re.compile(r"\s\*\s\*\s"), "**"),
    (re.compile(r"{\s"), "{"),
    (re.compile(r"\s}"), "}"),
    (re.compile(r"\\begin\s"), r"\\begin"),
    (re.compile(r"\\end\s"), r"\\end"),
    (re.compile(r"\\end{table}"), r"\\end{table} \n\n"),
)


def _pre_clean(line: str) -> str:
    """``pre_clean``: tokenizer marks and LaTeX spacing removed, ``*`` and ``_`` to spaces."""
    for pattern, repl in _CLEAN:
        line = pattern.sub(repl, line)
    return line.replace("\n", " ").replace("*", " ").replace("_", " ")


def _doc_tree(text: str) -> Any:
    """``get_tree``.

    ROOT over TITLE (the lines before any heading) and the headings, each heading over its
    lines (a heading met again takes the lines of the first one so named).
    """
    from zss import Node

    root = Node("ROOT").addkid(Node("TITLE"))
    last = ""
    for line in (_pre_clean(x) for x in text.split("\n")):
        if line.startswith("#"):
            line = line.replace("#", "")
            root.get("ROOT").addkid(Node(line))
            last = line
        else:
            root.get(last if last else "TITLE").addkid(Node(line))
    return root


def _label_distance(a: str, b: str) -> int:
    """``STEDS``' label distance: 1 when either label is blank, else 0."""
    return 1 if not a.split() or not b.split() else 0


def doc_parsing_evaluation(pred: Any, gt: str) -> float:
    """``doc_parsing_evaluation``: 1 - Zhang-Shasha distance / larger tree's node count.

    Raises:
        MetricUnavailable: ``zss`` is not installed.

    """
    try:
        from zss import simple_distance
    except ImportError as exc:  # pragma: no cover - the extra is installed in tests
        raise MetricUnavailable(f"OCRBench v2's document parsing needs zss: {_EXTRA}") from exc
    if not isinstance(pred, str):
        return 0
    # A tree has ROOT, TITLE and a node per line: counted before it is built (each line's
    # place is found by a search of the tree so far, itself quadratic in the lines).
    _check_pairs("a document", pred.count("\n") + 3, gt.count("\n") + 3)
    pred_tree, gt_tree = _doc_tree(pred), _doc_tree(gt)
    distance = simple_distance(pred_tree, gt_tree, label_dist=_label_distance)
    nodes = max(len(list(pred_tree.iter())), len(list(gt_tree.iter())))
    return float(1 - distance / nodes)
