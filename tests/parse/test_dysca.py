from lmmprobe.parse import dysca_match

OPTS = ["red", "blue", "green", "yellow"]


def test_dysca_rule_order():
    assert dysca_match("I think (b) is right", OPTS) == (1, "mark")
    assert dysca_match("A or maybe C", OPTS) == (2, "capital")  # the last capital letter
    assert dysca_match("bleu", OPTS) == (1, "levenshtein")
    assert dysca_match("(Z) is not offered, so Blue", OPTS) == (1, "capital")  # B from "Blue"
    assert dysca_match("", OPTS) == (None, "empty")
