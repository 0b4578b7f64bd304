"""Fact search on real text (issue 18): stale statistics, then fresh, over HTTP.

The corpus (``bench.corpus``): English sentences of the installed packages' docstrings and
Turkish messages of their translations (one fact in ten Turkish). Queries are cut from
sentences that were *not* loaded: 1, 2 and 4 words, a two-letter prefix, two words rare in
the loaded text, questions of 8, 12, 24 and 32 words, and the context block
(``POST /v0/memory/context``) for a 12-word question.

The table: ``BENCH_REAL_FACTS`` facts of one agent (100,000 by default) and a tenth of that
for a second agent (growth), in a table ``BENCH_REAL_TABLE_FACTOR`` times as big (the
others' facts drawn from the same text).

* **stale**: the other agents' facts are loaded and analyzed first, then the two agents'
  facts are loaded and nothing is analyzed again (as after a bulk load with autovacuum off,
  or for a fast-growing agent): the planner believes the agents have no rows.
* **fresh**: the same after ``VACUUM ANALYZE``.

For each: p50/p95/p99 per query class over HTTP (gunicorn, 2 workers), for both agents.
Under ``index``: what building the big agent's in-process index (``facts.postings``) costs,
in seconds and megabytes, as each server process pays it on the memory's first question.

**Peers** (``bench.peers``): SQLite FTS5 ``bm25()`` and Tantivy, in process, on the big
agent's facts and the same queries (every word OR-ed and prefix-matched): p50/p95/p99 per
class under ``peers``. **Relevance** (``bench.relevance``): ``BENCH_REAL_KNOWN_ITEMS``
(500) of the big agent's facts, each searched with three of its words, through memoryhub's
HTTP search and both peers: success@1, success@5 and MRR@10 under ``relevance``, with
what memoryhub's misses at @1 are made of and how other tie-breakers would have done.
``BENCH_REAL_SERVERS``: ``local`` (default) and/or ``embedded`` (pgserver's PostgreSQL 16).
``BENCH_REAL_BEFORE``: a checkout of an earlier version, measured beside this one: both
servers up at once, each query asked of one then the other.
``BENCH_REAL_STATES``: ``stale,fresh`` (default), or either alone.
"""

from __future__ import annotations

import io
import os
import random
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from datetime import UTC, datetime, timedelta
from pathlib import Path

from django.db import connection, connections

from bench import bench_search, common, corpus, peers, relevance
from facts.search import query_words

DATABASE = os.environ.get("BENCH_REAL_DATABASE", "mh_bench_search_real")
BIG = int(os.environ.get("BENCH_REAL_FACTS", "100000"))
SMALL = max(BIG // 10, 1000)
TABLE_FACTOR = int(os.environ.get("BENCH_REAL_TABLE_FACTOR", "4"))
QUERIES = int(os.environ.get("BENCH_REAL_QUERIES", "300"))
SMALL_QUERIES = max(QUERIES // 3, 50)
OTHER_AGENTS = 6
TURKISH_SHARE = 0.1
HELD_OUT = 0.1  # of the sentences, never loaded: the queries are cut from these
SEED = 18
KNOWN_ITEMS = int(os.environ.get("BENCH_REAL_KNOWN_ITEMS", "500"))
STATES = os.environ.get("BENCH_REAL_STATES", "stale,fresh").split(",")
QUESTION_SIZES = (8, 12, 24, 32)
_COLUMNS = ("workspace_id, agent_id, scope, path, text, tags, confidence, version, run_id, "
            "written_by, created_at, updated_at, search_text")  # fmt: skip


class Text:
    """The loaded sentences and the held-out ones, English and Turkish."""

    def __init__(self, rng: random.Random) -> None:
        english = corpus.english_sentences(int(BIG * 1.3))
        turkish = corpus.turkish_sentences()
        cut_en, cut_tr = int(len(english) * HELD_OUT), int(len(turkish) * HELD_OUT * 2)
        self.held_en, self.en = english[:cut_en], english[cut_en:]
        self.held_tr, self.tr = turkish[:cut_tr], turkish[cut_tr:]
        self.rng = rng

    def sentence(self) -> str:
        turkish = self.rng.random() < TURKISH_SHARE
        return self.rng.choice(self.tr if turkish else self.en)

    def held_out(self) -> list[str]:
        """Held-out words in reading order, a Turkish sentence one time in ten."""
        turkish = self.rng.random() < TURKISH_SHARE
        words = self.rng.choice(self.held_tr if turkish else self.held_en).split()
        while len(words) < 40:  # long questions run on into the next sentence
            words += self.rng.choice(self.held_en).split()
        return words


def query_sets(text: Text, loaded: Counter, count: int) -> dict[str, list[str]]:
    """Each class's queries, cut from held-out sentences. ``loaded``: words' counts in the
    loaded facts, for the rare words (in 1 to 3 facts)."""

    def cut(size: int) -> str:
        words = text.held_out()
        start = text.rng.randrange(0, len(words) - size + 1)
        return " ".join(words[start : start + size])

    def prefix() -> str:
        words = [w for w in text.held_out() if sum(c.isalpha() for c in w) >= 3]
        return "".join(c for c in text.rng.choice(words) if c.isalpha())[:2]

    rare = sorted(w for w, n in loaded.items() if 1 <= n <= 3)
    sets = {
        "1_word": [cut(1) for _ in range(count)],
        "2_words": [cut(2) for _ in range(count)],
        "4_words": [cut(4) for _ in range(count)],
        "two_letter_prefix": [prefix() for _ in range(count)],
        "2_rare_words": [" ".join(text.rng.sample(rare, 2)) for _ in range(count)],
    }
    for size in QUESTION_SIZES:
        sets[f"question_{size}_words"] = [cut(size) for _ in range(count)]
    sets["context_question_12_words"] = [cut(12) for _ in range(count)]
    return sets


def _rows(agent, run_id: str, text: Text, count: int, start: int) -> tuple[io.StringIO, list[str]]:
    """COPY's rows of ``count`` facts, oldest first, and their texts."""
    from facts.search import fold

    base, buffer, sentences = datetime(2026, 1, 1, tzinfo=UTC), io.StringIO(), []
    for n in range(start, start + count):
        sentence = text.sentence()
        sentences.append(sentence)
        moment = (base + timedelta(seconds=n)).isoformat()
        row = (agent.workspace_id, agent.id, "", "notes/", sentence.replace("\t", " "),
               "{bench}", "1", "1", run_id, "code", moment, moment, fold(sentence))  # fmt: skip
        buffer.write("\t".join(row).replace("\\", "\\\\") + "\n")
    return buffer, sentences


def _copy(buffer: io.StringIO) -> None:
    sql = f"COPY facts_fact ({_COLUMNS}) FROM STDIN"
    with connection.cursor() as cursor, cursor.copy(sql) as copy:
        copy.write(buffer.getvalue())


def _drop_indexes() -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'facts_fact' "
            "AND indexname <> 'facts_fact_pkey'"
        )
        indexes = cursor.fetchall()
        for name, _ in indexes:
            cursor.execute(f"DROP INDEX {name}")
        cursor.execute("ALTER TABLE facts_fact DISABLE TRIGGER USER")
    return [definition for _, definition in indexes]


def _build(indexes: list[str]) -> None:
    with connection.cursor() as cursor:
        cursor.execute("SET maintenance_work_mem = '512MB'")
        for definition in indexes:
            cursor.execute(definition)


def load(agents: list, run_id: str, text: Text) -> tuple[float, list[str]]:
    """The others' facts, analyzed; then the two measured agents' facts (``agents[:2]``),
    not analyzed: the statistics are stale. Returns the seconds and the big agent's facts'
    texts, oldest first."""
    from facts import terms

    started = time.perf_counter()
    indexes = _drop_indexes()
    others = max(BIG * TABLE_FACTOR - BIG - SMALL, 0) // (len(agents) - 2)
    for i, agent in enumerate(agents[2:]):
        _copy(_rows(agent, run_id, text, others, i * others)[0])
    _build(indexes)
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE facts_fact")
    indexes = _drop_indexes()
    start = len(agents) * others
    big, texts = _rows(agents[0], run_id, text, BIG, start)
    _copy(big)
    _copy(_rows(agents[1], run_id, text, SMALL, start)[0])
    _build(indexes)
    with connection.cursor() as cursor:
        cursor.execute(terms.RECOUNT_SQL)
        cursor.execute("ALTER TABLE facts_fact ENABLE TRIGGER USER")
        cursor.execute(
            "INSERT INTO facts_factquota (workspace_id, agent_id, scope, count) "
            "SELECT workspace_id, agent_id, scope, count(*) FROM facts_fact "
            "GROUP BY workspace_id, agent_id, scope"
        )
        cursor.execute("CHECKPOINT")
    return time.perf_counter() - started, texts


def _call(base: str, token: str, context: bool) -> Callable[[str], object]:
    client = common.Client(base, {"x-agentos-run-token": token})
    path = "/v0/memory/context" if context else "/v0/memory/search"

    def call(query: str) -> None:
        status, answer = client.request("POST", path, {"query": query})
        assert status == 200, answer

    return call


def _warm(base: str, tokens: list[str], queries: list[str]) -> None:
    """Each server process builds a memory's index on its first questions (``index`` says
    what that costs): two clients at once, so that both gunicorn workers hold both agents'
    indexes before anything is timed, not one of them in the middle of a class."""

    def ask_all(token: str) -> None:
        call = _call(base, token, context=False)
        for query in queries:
            call(query)

    with ThreadPoolExecutor(2) as pool:
        for token in tokens:
            list(pool.map(ask_all, [token, token]))  # raises what a client raised


def measure(bases: dict[str, str], big: str, small: str, sets: dict[str, list[str]]) -> dict:
    """Each version's figures (``bases``: version -> its server), the versions answering
    each query in turn, first one then the other, so that the machine's drift (its speed
    changed twofold within one run here) weighs on all alike. big, small: the run tokens
    of the big and the small agent."""
    for base in bases.values():
        _warm(base, [big, small], sets["question_12_words"][:20])
    figures: dict[str, dict] = {code: {} for code in bases}
    for name, queries in sets.items():
        context = name.startswith("context")
        http = bench_search.in_turns({c: _call(b, big, context) for c, b in bases.items()}, queries)
        small_http = bench_search.in_turns(
            {c: _call(b, small, context) for c, b in bases.items()}, queries[:SMALL_QUERIES]
        )
        for code in bases:
            figures[code][name] = {
                "http": http[code],
                "small_agent_http": small_http[code],
                "growth_p95": round(http[code]["p95_ms"] / small_http[code]["p95_ms"], 2),
            }
            print(f"    {name}, {code}: {http[code]} | small p95 "
                  f"{small_http[code]['p95_ms']}", flush=True)  # fmt: skip
    return figures


def measure_peers(engines: list, sets: dict[str, list[str]]) -> dict:
    """p50/p95/p99 of each BM25 peer, in process, on the query classes (not the context
    block, which only memoryhub has), ``k`` as memoryhub's default."""
    from facts.validation import K_DEFAULT

    figures: dict = {}
    for engine in engines:
        figures[engine.name] = {}
        for name, queries in sets.items():
            if name.startswith("context"):
                continue
            timed = bench_search._timed(
                lambda q, e=engine: e.search(query_words(q), K_DEFAULT), queries
            )
            figures[engine.name][name] = timed
            print(f"    {engine.name} {name}: {timed}", flush=True)
    return figures


def _ours_found(base: str, token: str, items: list) -> tuple[list[list[str]], list[list[float]]]:
    """memoryhub's first ten results (texts, scores) for each known item, over HTTP."""
    client = common.Client(base, {"x-agentos-run-token": token})
    texts, scores = [], []
    for _, query in items:
        body = {"query": " ".join(query), "k": relevance.DEPTH}
        status, answer = client.request("POST", "/v0/memory/search", body)
        assert status == 200, answer
        texts.append([fact["text"] for fact in answer["facts"]])
        scores.append([fact["score"] for fact in answer["facts"]])
    return texts, scores


def judge(facts: relevance.Facts, items: list, found: dict, scores: list) -> dict:
    """The known-item figures of every engine, and why memoryhub misses where it does."""
    figures: dict = {
        engine: relevance.metrics(
            [relevance.rank_of(facts.texts[p], texts[i]) for i, (p, _) in enumerate(items)]
        )
        for engine, texts in found.items()
    }
    figures["memoryhub_misses_at_1"] = relevance.explain(facts, items, found, scores)
    figures["memoryhub_score_other_tie_breaks"] = relevance.tie_breaks(facts, items)
    figures["examples"] = [
        {"fact": facts.texts[p], "query": " ".join(q)} for p, q in items[:3]
    ]  # fmt: skip
    for engine in found:
        print(f"    {engine} known items: {figures[engine]}", flush=True)
    return figures


def _agents() -> tuple[list, str, str, str]:
    """The big agent, the small one, the others; a run id and both agents' run tokens."""
    from memoryhub.principals import Principal
    from memoryhub.services import agents
    from threads.services.runs import accept_run
    from threads.services.threads import create_thread

    big, run, token = bench_search.bench_facts._setup()
    principal = Principal.system(big.workspace)
    others = [agents.create(principal, name=f"agent {i}") for i in range(OTHER_AGENTS + 1)]
    small_run = accept_run(principal, create_thread(principal, others[0].id, end_user="u").id)
    return [big, *others], run.id, token, small_run.token


def _versions() -> dict[str, Path]:
    """This tree's code ("now"), and an earlier checkout's ("before") when
    ``BENCH_REAL_BEFORE`` names one: both measured on the same data."""
    before = os.environ.get("BENCH_REAL_BEFORE")
    return {"now": common.ROOT, **({"before": Path(before)} if before else {})}


def index_build(agent) -> dict:
    """The big agent's in-process index (facts.postings), built as a server process builds
    it on the memory's first question: its seconds, size and the memory it takes."""
    import tracemalloc

    from facts import postings
    from facts.terms import Memory

    memory = Memory(agent.id, "")
    figures = {}
    for traced in (False, True):  # the time without tracemalloc, which slows what it traces
        postings.forget()
        postings.note(memory, BIG)
        if traced:
            tracemalloc.start()
        started = time.perf_counter()
        with postings.opened(memory, [], None) as index:
            assert index is not None, "the bench's memory must be indexed"
            figures.setdefault("build_seconds", round(time.perf_counter() - started, 2))
            figures.update(postings=index.postings, lexemes=len(index.lexemes))
        if traced:
            figures["megabytes"] = round(tracemalloc.get_traced_memory()[0] / 2**20, 1)
            tracemalloc.stop()
    postings.forget()
    connections.close_all()
    print(f"  in-process index: {figures}", flush=True)
    return figures


def on_server(label: str, host: str, port: str) -> dict:
    started = time.perf_counter()
    text = Text(random.Random(SEED))
    with bench_search._database(host, port, DATABASE) as url:
        with connection.cursor() as cursor:
            cursor.execute("SHOW server_version")
            version = cursor.fetchone()[0]
        agents, run_id, big, small = _agents()
        load_seconds, texts = load(agents, run_id, text)
        print(f"{label} (PostgreSQL {version}): loaded in {load_seconds:.0f}s", flush=True)
        words = Counter(w for sentence in texts for w in query_words(sentence))
        sets = query_sets(text, words, QUERIES)
        connections.close_all()
        print("  BM25 peers, in process", flush=True)
        engines = peers.engines(texts)
        items = relevance.known_items(texts, KNOWN_ITEMS, SEED + 1)
        found = {
            e.name: [[texts[n] for n in e.search(q, relevance.DEPTH)] for _, q in items]
            for e in [*engines, *peers.engines(texts, prefix=False)]
        }
        figures: dict = {"peers": measure_peers(engines, sets), "index": index_build(agents[0])}
        del engines
        facts, ours, scores = relevance.Facts(texts), {}, {}
        for state in STATES:
            if state == "fresh":
                with connection.cursor() as cursor:
                    cursor.execute("VACUUM ANALYZE facts_fact")
                    cursor.execute("VACUUM ANALYZE facts_factterm")
                connections.close_all()
            print(f"  {state} statistics", flush=True)
            with ExitStack() as servers:
                bases = {
                    code: servers.enter_context(common.server(url, root=root))
                    for code, root in _versions().items()
                }
                for code, measured in measure(bases, big, small, sets).items():
                    figures[state if code == "now" else f"{state}_{code}"] = measured
                if state == STATES[-1]:  # the ranking does not depend on the state
                    for code, base in bases.items():
                        engine = "memoryhub" + ("" if code == "now" else f"_{code}")
                        ours[engine], scores[engine] = _ours_found(base, big, items)
        figures["relevance"] = judge(facts, items, {**ours, **found}, scores["memoryhub"])
    stale_over_fresh = {
        name: round(figures["stale"][name]["http"]["p95_ms"] / f["http"]["p95_ms"], 2)
        for name, f in figures.get("fresh", {}).items()
        if "stale" in figures
    }
    return {
        "now_over_before": _ratios(figures),
        "server_version": version,
        "facts": BIG,
        "small_agent_facts": SMALL,
        "table_facts": BIG * TABLE_FACTOR,
        "corpus": {
            "english_sentences": len(text.en),
            "turkish_sentences": len(text.tr),
            "held_out_english": len(text.held_en),
            "held_out_turkish": len(text.held_tr),
            "turkish_share": TURKISH_SHARE,
        },  # fmt: skip
        "queries_per_class": QUERIES,
        "examples": {name: queries[:3] for name, queries in sets.items()},
        **figures,
        "stale_over_fresh_p95": stale_over_fresh,
        "seconds": round(time.perf_counter() - started, 1),
    }


def _ratios(figures: dict) -> dict:
    """Per state and class, this version's p50 and p95 over the earlier one's (measured in
    turns with it); empty without ``BENCH_REAL_BEFORE``."""
    ratios: dict = {}
    for state in STATES:
        before = figures.get(f"{state}_before")
        for name, now in figures.get(state, {}).items() if before else ():
            ratios.setdefault(state, {})[name] = {
                at: round(now["http"][at] / before[name]["http"][at], 2)
                for at in ("p50_ms", "p95_ms")
            }
    return ratios


def run(results: dict) -> None:
    servers = os.environ.get("BENCH_REAL_SERVERS", "local").split(",")
    figures: dict = {}
    shared = connections.settings["default"]
    if "local" in servers:
        local = shared.get("HOST") or "127.0.0.1", str(shared.get("PORT") or 5432)
        figures["local"] = on_server("local", *local)
    if "embedded" in servers:
        with bench_search._embedded() as (host, port):
            figures["embedded_pg16"] = on_server("embedded", host, port)
    results["search_real"] = figures
