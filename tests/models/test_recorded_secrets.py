"""A secret in a spec never reaches a file, even where the spec is accepted (issue 34).

A served model's command line with a secret on it is refused (`test_served_secrets.py`); that
refusal was the only guard of what is recorded. The writers of the run's records redact every
spec they write with the same rule (`lmmprobe._secrets`): the store (runs, responses, scores,
judgements) and results.json / results.md. The reproduction: a password in an OpenAI-compatible
server's URL, which the ``openai`` backend accepts (the server may want basic authentication).
"""

from __future__ import annotations

import base64
import http.server
import json
import sqlite3
import threading
from pathlib import Path

from tests.console import lmmprobe

from lmmprobe._secrets import REDACTED, redact_record, redact_spec, redact_text
from lmmprobe.models.api_keys import redact_options
from lmmprobe.store import Store
from lmmprobe.testing.openai_server import FakeOpenAIServer

PASSWORD = "hunter2-s3cr3t-pw"


def _nothing_recorded(root: Path) -> None:
    files = [path for path in root.rglob("*") if path.is_file()]
    assert files
    for path in files:
        assert PASSWORD.encode() not in path.read_bytes(), path


def test_a_password_in_a_server_url_is_never_recorded(tmp_path: Path) -> None:
    with FakeOpenAIServer() as server:
        url = server.base_url.replace("://", f"://user:{PASSWORD}@", 1)
        model, judge = f"openai:fake-vlm@{url}", f"openai:fake-judge@{url}"
        ran = lmmprobe("run", "-m", model, "--limit", "3", "-q",
                       "--db", tmp_path / "db", "--out", tmp_path / "o")  # fmt: skip
        assert ran.returncode == 0, ran.stdout + ran.stderr
        # The judge's replies cannot be read (the fake server answers as a model): the run is
        # judging_failed, and everything it recorded is checked all the same.
        judged = lmmprobe("judge", "latest", "--judge", judge, "--judge-when", "always",
                          "--db", tmp_path / "db", "--out", tmp_path / "j")  # fmt: skip
        assert "Traceback" not in judged.stderr, judged.stderr
    _nothing_recorded(tmp_path)
    shown = model.replace(PASSWORD, REDACTED)
    results = json.loads((tmp_path / "o" / "results.json").read_text(encoding="utf-8"))
    assert list(results["models"]) == [shown]
    assert results["spec"]["models"] == [shown]
    assert list(results["manifest"]["models"]) == [shown]
    assert f"`{shown}`" in (tmp_path / "o" / "results.md").read_text(encoding="utf-8")
    with sqlite3.connect(tmp_path / "db") as conn:
        assert conn.execute("SELECT DISTINCT model FROM scores").fetchall() == [(shown,)]
        stored_judges = conn.execute("SELECT DISTINCT judge FROM judgements").fetchall()
    assert stored_judges == [(judge.replace(PASSWORD, REDACTED),)]
    # The stored run still reads back whole: its results and its rows name the same model.
    report = lmmprobe("report", "latest", "--db", tmp_path / "db", "--format", "md",
                      "--out", tmp_path / "r.md")  # fmt: skip
    assert report.returncode == 0, report.stderr
    assert PASSWORD not in (tmp_path / "r.md").read_text(encoding="utf-8")


def test_the_store_redacts_a_secret_the_refusal_would_have_caught(tmp_path: Path) -> None:
    # Written straight to the store, as a future writer might: the store itself redacts.
    spec = f"vllm:some/model,args=--api-key {PASSWORD}"
    judge = f"openai:j@http://127.0.0.1:1/v1,key_env=JUDGE_KEY,note=Bearer {PASSWORD}"
    store = Store(tmp_path / "db")
    try:
        store.create_run("r1", {"models": [spec], "judge": {"judges": [judge]}}, str(tmp_path))
        store.update_run("r1", manifest={"models": {spec: {"options": {"args": spec}}}})
        store.update_run("r1", results={"models": {spec: {}}})
    finally:
        store.close()
    _nothing_recorded(tmp_path)
    with sqlite3.connect(tmp_path / "db") as conn:
        recorded = json.loads(conn.execute("SELECT spec FROM runs").fetchone()[0])
    assert recorded["models"] == [f"vllm:some/model,args=--api-key {REDACTED}"]
    # key_env names a variable: kept, so the recorded spec still says where the key comes from.
    assert recorded["judge"]["judges"] == [
        f"openai:j@http://127.0.0.1:1/v1,key_env=JUDGE_KEY,note=Bearer {REDACTED}"
    ]


def test_prompts_are_not_redacted_and_redaction_is_stable() -> None:
    doc = {
        "models": ["openai:gpt-4o,key_env=MY_KEY", "hf:./ckpt,max_tokens_total=9"],
        "formulate": {"instruction": "Answer key: the letter", "system_prompt": "token: A"},
        "gen": {"stop": ["Key: "]},
        "breakdown": {"task": {"auth: login screen": {}}},
        "db": "/data/keys/db.sqlite",
    }
    assert redact_record(doc) == doc
    once = redact_spec(f"vllm:m,args=--token {PASSWORD} HF_TOKEN={PASSWORD}")
    assert PASSWORD not in once
    assert redact_spec(once) == once


def test_the_terminal_shows_a_secret_bearing_spec_redacted(tmp_path: Path) -> None:
    # Issue 34: the files were redacted, but the terminal echoed the spec as typed (the dry
    # run's lines, the run table's legend, compare's error naming the model).
    db = tmp_path / "db"
    with FakeOpenAIServer() as server:
        url = server.base_url.replace("://", f"://user:{PASSWORD}@", 1)
        model = f"openai:fake-vlm@{url}"
        shown = model.replace(PASSWORD, REDACTED)
        common = ("-d", "demo,n=4", "--db", db)
        dry = lmmprobe("run", "-m", model, *common, "--out", tmp_path / "d", "--dry-run")
        assert f"{shown}: 4 request(s) to send of 4" in dry.stdout, dry.stdout + dry.stderr
        ran = lmmprobe("run", "-m", model, *common, "--out", tmp_path / "o")
        assert ran.returncode == 0, ran.stdout + ran.stderr
        assert f"= {shown}" in ran.stdout
        outputs = [dry, ran]
        for args in (("runs",), ("show", "latest"), ("score", "latest"),
                     ("compare", "latest", "-m", model, "-m", "first")):  # fmt: skip
            outputs.append(lmmprobe(*args, "--db", db))
    for proc in outputs:
        assert PASSWORD not in proc.stdout + proc.stderr, proc.args
        assert "Traceback" not in proc.stderr, proc.stderr
    # compare finds the model by the spec as typed (the store holds it redacted).
    assert "has no scores for model 'openai:fake-vlm" not in outputs[-1].stderr


def test_a_key_in_a_url_query_string_is_never_recorded_or_shown(tmp_path: Path) -> None:
    # Issue 34, re-test 3 (item 3): ``?key=``, ``?api-key=`` and a judge's ``?token=`` reached
    # results.json/md, the store (a server's 404 quoting the base URL) and the terminal.
    db = tmp_path / "db"
    outputs = []
    with FakeOpenAIServer() as server:
        url = server.base_url
        judge = f"openai:fake-judge@{url}?token={PASSWORD}"
        for i, query in enumerate((f"?key={PASSWORD}", f"?api-key={PASSWORD}&x=1")):
            model = f"openai:fake-vlm@{url}{query}"
            ran = lmmprobe("run", "-m", model, "--limit", "2", "--judge", judge,
                           "--db", db, "--out", tmp_path / f"o{i}")  # fmt: skip
            assert "Traceback" not in ran.stderr, ran.stderr
            outputs.append(ran)
        outputs += [lmmprobe(*args, "--db", db) for args in (("runs",), ("show", "latest"))]
    _nothing_recorded(tmp_path)
    for proc in outputs:
        assert PASSWORD not in proc.stdout + proc.stderr, proc.args
    results = json.loads((tmp_path / "o0" / "results.json").read_text(encoding="utf-8"))
    assert results["spec"]["models"] == [f"openai:fake-vlm@{url}?key={REDACTED}"]


def test_url_parameters_that_hold_no_secret_are_kept() -> None:
    for text in ("openai:m@http://h/v1?tokenizer=m&max_tokens=5&page=2",
                 "--endpoint https://h/x?api_key=", "http://h/v1?model=sk-learn"):  # fmt: skip
        assert redact_spec(text) == text
    assert (
        redact_text("--endpoint https://h/x?api_key=X1")
        == f"--endpoint https://h/x?api_key={REDACTED}"
    )


def test_models_differing_in_an_amount_are_two_models_and_alike_ones_are_refused(
    tmp_path: Path,
) -> None:
    # Re-test 4 of issue 34: `thinking_token_budget` holds the word "token", its value was
    # hidden, and two budgets compared in one run were stored as one model (half the rows lost).
    with FakeOpenAIServer() as server:
        base = f"openai:fake-vlm@{server.base_url},chat_template_kwargs=thinking_token_budget="
        ran = lmmprobe("run", "-m", base + "64", "-m", base + "4096", "--limit", "3", "-q",
                       "--db", tmp_path / "db", "--out", tmp_path / "o",
                       OPENAI_API_KEY="k-test")  # fmt: skip
        assert ran.returncode == 0, ran.stdout + ran.stderr
        results = json.loads((tmp_path / "o" / "results.json").read_text(encoding="utf-8"))
        assert list(results["models"]) == [base + "64", base + "4096"]
        # Models that differ only in a value hidden as a possible secret are refused, the
        # values unshown, before anything is asked.
        session = f"openai:fake-vlm@{server.base_url},session_id="
        refused = lmmprobe("run", "-m", session + PASSWORD, "-m", session + "other-s3ssion",
                           "--limit", "3", "--db", tmp_path / "db2", "--out", tmp_path / "o2",
                           OPENAI_API_KEY="k-test")  # fmt: skip
        assert refused.returncode == 2, refused.stdout + refused.stderr
        assert "recorded alike" in refused.stderr
        assert PASSWORD not in refused.stdout + refused.stderr
        assert "other-s3ssion" not in refused.stdout + refused.stderr
        assert server.completed == 3 * 2
    assert not (tmp_path / "o2").exists()


def test_messages_naming_a_spec_hide_its_secret(tmp_path: Path) -> None:
    # Re-test 4 of issue 34: a price error, the --max-cost refusal of an unpriced model and a
    # dry run's judge line printed the spec as typed.
    rows = tmp_path / "rows.jsonl"
    rows.write_text(
        json.dumps({"id": "a", "question": "Q?", "choices": ["x", "y"], "answer": 0}) + "\n"
    )
    model = f"openai:m@http://127.0.0.1:9/v1?key={PASSWORD}"
    judge = f"openai:j@http://127.0.0.1:9/v1?token={PASSWORD}"
    common = ("--data", "demo,n=4", "--db", tmp_path / "db")
    for args, shows in (
        (("-m", model + ",price=x:y"), "is not a price"),
        (("-m", model, "--max-cost", "5"), "needs a price"),
        (("-m", model, "--judge", judge, "--dry-run"), "judge openai:j@"),
    ):
        done = lmmprobe("run", *args, *common, OPENAI_API_KEY="k-test")
        out = done.stdout + done.stderr
        assert shows in out, out
        assert PASSWORD not in out, out


def test_a_token_as_a_server_urls_user_is_never_recorded(tmp_path: Path) -> None:
    # Re-test 4 of issue 34 (item 4): ``http://TOKEN@host/v1`` (a bearer token given as the
    # URL's user, no password) was recorded as typed.
    with FakeOpenAIServer() as server:
        url = server.base_url.replace("://", f"://{PASSWORD}@", 1)
        model = f"openai:fake-vlm@{url}"
        ran = lmmprobe("run", "-m", model, "--limit", "2", "-q",
                       "--db", tmp_path / "db", "--out", tmp_path / "o")  # fmt: skip
        assert ran.returncode == 0, ran.stdout + ran.stderr
    assert PASSWORD not in ran.stdout + ran.stderr
    _nothing_recorded(tmp_path)
    results = json.loads((tmp_path / "o" / "results.json").read_text(encoding="utf-8"))
    assert list(results["models"]) == [model.replace(PASSWORD, REDACTED)]


def test_a_secret_inside_an_option_mapping_is_never_recorded(tmp_path: Path) -> None:
    # Re-test 5 of issue 34, finding 1: the spec was recorded redacted, but the model's parsed
    # options (its identity in the manifest: results.json, results.md, the store) held the
    # value of ``chat_template_kwargs=api_token=...`` raw; a number is read as one.
    kwargs = f"api_token={PASSWORD};password=86421357;enable_thinking=false"
    with FakeOpenAIServer() as server:
        model = f"openai:fake-vlm@{server.base_url},chat_template_kwargs={kwargs}"
        ran = lmmprobe("run", "-m", model, "--limit", "3", "-q",
                       "--db", tmp_path / "db", "--out", tmp_path / "o")  # fmt: skip
        assert ran.returncode == 0, ran.stdout + ran.stderr
    for path in (p for p in tmp_path.rglob("*") if p.is_file()):
        assert b"86421357" not in path.read_bytes(), path
    _nothing_recorded(tmp_path)
    results = json.loads((tmp_path / "o" / "results.json").read_text(encoding="utf-8"))
    ((shown, identity),) = results["manifest"]["models"].items()
    assert shown == redact_spec(model)
    assert identity["options"]["chat_template_kwargs"] == {
        "api_token": REDACTED, "password": REDACTED, "enable_thinking": False,
    }  # fmt: skip
    assert identity["options"]["base_url"] == server.base_url


def test_a_secret_inside_a_judges_option_mapping_is_never_recorded(tmp_path: Path) -> None:
    # The judge's identity went to results.json and the store with its parsed options raw
    # (``m.identity.model_dump`` in the judging step's manifest).
    kwargs = "api_token=97531864;enable_thinking=false"
    with FakeOpenAIServer(reply_table=[("", "A")]) as server:  # every reply readable
        judge = f"openai:fake-vlm@{server.base_url},chat_template_kwargs={kwargs}"
        ran = lmmprobe("run", "-m", "first", "--data", "demo,n=3", "--judge", judge,
                       "--judge-protocol", "lmmprobe-choice", "--judge-when", "always", "-q",
                       "--db", tmp_path / "db", "--out", tmp_path / "o", OPENAI_API_KEY="k")  # fmt: skip
        assert ran.returncode == 0, ran.stdout + ran.stderr
    for path in (p for p in tmp_path.rglob("*") if p.is_file()):
        assert b"97531864" not in path.read_bytes(), path
    results = json.loads((tmp_path / "o" / "results.json").read_text(encoding="utf-8"))
    (identity,) = results["manifest"]["judge"]["judges"].values()
    assert identity["options"]["chat_template_kwargs"]["api_token"] == REDACTED


def test_option_mappings_are_redacted_by_the_rule_of_the_spec() -> None:
    options = {
        "base_url": f"http://user:{PASSWORD}@h/v1",
        "key_env": "MY_KEY",  # a variable's name: kept, as in the spec
        "revision": "a" * 40,  # a commit, no key
        "extra": {"deep": {"secret": PASSWORD, "size": 3}, "tokens": ["a", PASSWORD]},
        "args": f"--api-key {PASSWORD}",
        "password": f"{PASSWORD};more",  # the spec would split it: replaced whole
        "api_token": None,
    }
    got = redact_options(options)
    assert PASSWORD not in json.dumps(got)
    assert got["base_url"] == f"http://user:{REDACTED}@h/v1"
    assert got["key_env"] == "MY_KEY" and got["revision"] == "a" * 40
    assert got["extra"]["deep"] == {"secret": REDACTED, "size": 3}
    assert got["args"] == f"--api-key {REDACTED}"
    assert got["password"] == REDACTED and got["api_token"] == REDACTED
    assert redact_options({"chat_template_kwargs": {"enable_thinking": True, "n": 2}}) == {
        "chat_template_kwargs": {"enable_thinking": True, "n": 2}
    }


def test_the_judged_headline_line_shows_a_judges_spec_redacted(tmp_path: Path) -> None:
    # Re-test 19: the terminal's "accuracy, balanced_accuracy judged: ... count as JUDGE read
    # them" line named the judge by its spec as typed, a password in its URL included (the
    # judge's own line and results.md hid it), under `run` and under `lmmprobe judge`.
    db = tmp_path / "db"
    # The model's answer names no option (the rules cannot read it), the judge names one.
    with FakeOpenAIServer(reply_table=[("@judge ", "A"), ("", "no idea")]) as server:
        url = server.base_url.replace("://", f"://user:{PASSWORD}@", 1)
        judge = f"openai:judge@{url}"
        common = ("--judge", judge, "--judge-when", "always", "--db", db)
        ran = lmmprobe("run", "-m", f"openai:fake-vlm@{server.base_url}", "-d", "demo,n=2",
                       *common, "--out", tmp_path / "o", OPENAI_API_KEY="k")  # fmt: skip
        judged = lmmprobe("judge", "latest", *common, "--out", tmp_path / "j", OPENAI_API_KEY="k")
    for proc in (ran, judged):
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "judged: 2 answer(s) the rules could not read count as" in proc.stdout
        assert f"openai:judge@{url.replace(PASSWORD, REDACTED)} read them" in proc.stdout
        assert PASSWORD not in proc.stdout + proc.stderr, proc.args
    _nothing_recorded(tmp_path)


SIGNED_QUERIES = ("?oauth_signature={}&oauth_nonce=n1", "?sid={}", "?ticket={}", "?JSESSIONID={}",
                  "?X-Amz-Signature={}", "?oauth_verifier={}&page=2", "?_csrf={}")  # fmt: skip


def test_a_signature_session_or_ticket_in_a_url_query_is_never_recorded_or_shown(
    tmp_path: Path,
) -> None:
    # Re-test 20 #16: ``oauth_signature``, ``sid`` and ``ticket`` named no secret word, and
    # their values reached results.json, the store and the terminal.
    db = tmp_path / "db"
    with FakeOpenAIServer() as server:
        models = [f"openai:fake-vlm@{server.base_url}{q.format(PASSWORD)}" for q in SIGNED_QUERIES]
        args = [a for m in models for a in ("-m", m)]
        ran = lmmprobe("run", *args, "--limit", "1", "-q", "--db", db, "--out", tmp_path / "o")
        # The server's 404s quote the URL (a query before /chat/completions): hidden there too.
        assert "Traceback" not in ran.stderr, ran.stderr
        shown = lmmprobe("show", "latest", "--db", db)
    _nothing_recorded(tmp_path)
    for proc in (ran, shown):
        assert PASSWORD not in proc.stdout + proc.stderr, proc.args
    results = json.loads((tmp_path / "o" / "results.json").read_text(encoding="utf-8"))
    assert f"?sid={REDACTED}" in results["spec"]["models"][1]
    assert results["spec"]["models"][0].endswith(f"?oauth_signature={REDACTED}&oauth_nonce=n1")


def test_query_parameters_that_only_resemble_these_are_kept() -> None:
    for text in ("openai:m@http://h/v1?sig_count=3&page=2", "http://h/tickets/12?sort=id",
                 "http://h/v1/ticket/12"):  # fmt: skip
        assert redact_spec(text) == text


def test_a_url_password_sent_as_basic_authentication_and_echoed_is_never_recorded(
    tmp_path: Path,
) -> None:
    # Re-test 21: httpx sends a URL's user:password as "Authorization: Basic <base64>"; a
    # server echoing its request headers into the answers (and errors) had that base64 stored
    # and exported, the password one decoding away.
    import base64

    encoded = base64.b64encode(f"user:{PASSWORD}".encode()).decode()
    with FakeOpenAIServer(echo_key_in_answers=True, echo_key=True) as server:
        url = server.base_url.replace("://", f"://user:{PASSWORD}@", 1)
        ran = lmmprobe("run", "-m", f"openai:fake-vlm@{url}", "--limit", "2", "-q",
                       "--db", tmp_path / "db", "--out", tmp_path / "o")  # fmt: skip
        assert any(encoded in seen for seen in server.seen_authorization)  # sent, and echoed
    assert ran.returncode == 0, ran.stdout + ran.stderr
    csv = lmmprobe("export", "latest", "--db", tmp_path / "db", "--format", "csv")
    for proc in (ran, csv):
        assert encoded not in proc.stdout + proc.stderr, proc.args
    assert f"Basic {REDACTED}" in csv.stdout
    for path in (p for p in tmp_path.rglob("*") if p.is_file()):
        assert encoded.encode() not in path.read_bytes(), path
    _nothing_recorded(tmp_path)


class _QuotesBasicPassword(http.server.BaseHTTPRequestHandler):
    """A proxy refusing every request with the password it decoded from basic authentication."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        sent = self.headers.get("Authorization", "").removeprefix("Basic ")
        password = base64.b64decode(sent).decode().partition(":")[2]
        body = json.dumps({"error": {"message": f"wrong password {password} for user bob"}})
        self.send_response(401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body.encode())

    def log_message(self, format: str, *args: object) -> None:
        pass


def test_a_percent_encoded_url_password_quoted_decoded_is_never_recorded(tmp_path: Path) -> None:
    # Re-test 22: the password of http://bob:p%40ss...@host is sent decoded (p@ss...); a server
    # quoting that in its 401 had it stored, exported and printed: only its written form
    # (p%40ss...) and the base64 of the pair were known as secrets.
    decoded = "p@ss-Encoded-s3cr3t"
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _QuotesBasicPassword)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://bob:p%40ss-Encoded-s3cr3t@127.0.0.1:{server.server_address[1]}/v1"
        ran = lmmprobe("run", "-m", f"openai:vlm@{url},max_attempts=1", "--limit", "2",
                       "--db", tmp_path / "db", "--out", tmp_path / "o")  # fmt: skip
    finally:
        server.shutdown()
        server.server_close()
    csv = lmmprobe("export", "latest", "--db", tmp_path / "db", "--format", "csv")
    assert "Traceback" not in ran.stderr, ran.stderr
    assert f"wrong password {REDACTED} for user bob" in csv.stdout, csv.stdout
    for proc in (ran, csv):
        assert decoded not in proc.stdout + proc.stderr, proc.args
    for path in (p for p in tmp_path.rglob("*") if p.is_file()):
        assert decoded.encode() not in path.read_bytes(), path
