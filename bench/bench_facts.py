"""Facts at 100,000 per agent: search and list latency over HTTP, raw SQL beside it, writes/s.

Runs in its own database ``mh_bench_facts`` (dropped, created and migrated afresh). One
agent is filled with 100,000 facts of generated text (10,000 distinct words, a tenth of
them Turkish, Zipf-distributed like real text) by COPY, then a real gunicorn serves the
API and a single client measures:

* search p50/p95 over HTTP for 1-, 2- and 4-word queries (words drawn uniformly from the
  vocabulary), and the same search run in process beside them (its SQL statements and
  the row load, no HTTP: "raw_sql"); also the ten most frequent words alone;
* list p50 (``GET /v0/memory/facts``, first pages and ``before=`` pages);
* GET one fact by id, the fixed cost of any HTTP request, to read the others against;
* writes per second, one client and four clients in parallel.

Targets (issue 3): search p95 < 25 ms over HTTP, HTTP within 3x of the raw SQL time.
"""

from __future__ import annotations

import io
import random
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import requests
from django.db import connection, connections

from bench import common

DATABASE = "mh_bench_facts"
FACTS = 100_000
VOCABULARY = 10_000
TURKISH_SHARE = 0.1
QUERIES_PER_SIZE = 150
LIST_REQUESTS = 100
WRITES = 200
PARALLEL_WRITERS = 4
SEED = 3
ROOT = Path(__file__).resolve().parent.parent

_EN = [
    "ba",
    "be",
    "bi",
    "co",
    "da",
    "de",
    "di",
    "fa",
    "ga",
    "ha",
    "ka",
    "la",
    "le",
    "li",
    "ma",
    "me",
    "mo",
    "na",
    "ne",
    "no",
    "pa",
    "pe",
    "ra",
    "re",
    "ri",
    "ro",
    "sa",
    "se",
    "si",
    "ta",
    "te",
    "ti",
    "to",
    "va",
    "ve",
    "wa",
    "ya",
    "za",
    "st",
    "tr",
    "pl",
    "ch",
]
_TR = [
    "şe",
    "ğa",
    "ıl",
    "ök",
    "ün",
    "çi",
    "İs",
    "Iş",
    "ış",
    "gü",
    "sö",
    "çe",
    "ğı",
    "dı",
    "kı",
    "şı",
    "öz",
    "üç",
    "ça",
    "ya",
]
_REAL = [
    "director",
    "directors",
    "company",
    "invoice",
    "meeting",
    "istanbul",
    "İstanbul",
    "ankara",
    "müşteri",
    "şirket",
    "ışık",
    "IŞIK",
    "öğretmen",
    "çiçek",
    "ağaç",
    "tea",
    "coffee",
    "prefers",
    "renewal",
    "contract",
    "Ayşe",
    "Yılmaz",
    "Güneş",
    "Çelik",
]


def _vocabulary(rng: random.Random) -> list[str]:
    words: list[str] = list(dict.fromkeys(_REAL))
    seen = {w.lower() for w in words}
    while len(words) < VOCABULARY:
        turkish = rng.random() < TURKISH_SHARE
        parts = [rng.choice(_TR if turkish and i == 0 else _EN + (_TR if turkish else []))
                 for i in range(rng.randint(2, 4))]  # fmt: skip
        word = "".join(parts)
        if word.lower() not in seen:
            seen.add(word.lower())
            words.append(word)
    rng.shuffle(words)
    return words


def _texts(rng: random.Random, words: list[str]) -> Iterator[str]:
    weights = [1 / (rank + 1) ** 0.9 for rank in range(len(words))]
    cumulative = list(_accumulate(weights))
    for _ in range(FACTS):
        chosen = rng.choices(words, cum_weights=cumulative, k=rng.randint(6, 20))
        yield " ".join(chosen).capitalize() + "."


def _accumulate(values: list[float]) -> Iterator[float]:
    total = 0.0
    for value in values:
        total += value
        yield total


def own_database():
    return common.own_database(DATABASE)


def _setup():
    from memoryhub.principals import Principal
    from memoryhub.services import agents
    from memoryhub.services.workspaces import create_workspace
    from threads.services.runs import accept_run
    from threads.services.threads import create_thread

    workspace = create_workspace("bench")
    principal = Principal.system(workspace)
    agent = agents.create(principal, name="bench")
    thread = create_thread(principal, agent.id, end_user="bench-user")
    accepted = accept_run(principal, thread.id)
    return agent, accepted.run, accepted.token


def load_facts(agent, run, rng: random.Random, words: list[str]) -> float:
    """COPY 100,000 facts (GIN index built after), their versions and the quota row."""
    from facts.search import fold

    started = time.perf_counter()
    base = datetime(2026, 1, 1, tzinfo=UTC)
    columns = ("workspace_id, agent_id, scope, path, text, tags, confidence, version, run_id, "
               "written_by, created_at, updated_at, search_text")  # fmt: skip
    with connection.cursor() as cursor:
        cursor.execute("DROP INDEX fact_search_gin")
        buffer = io.StringIO()
        for n, text in enumerate(_texts(rng, words)):
            moment = (base + timedelta(seconds=n)).isoformat()
            path = f"companies/{n % 1000}/" if n % 4 else "notes/"
            row = (agent.workspace_id, agent.id, "", path, text, "{bench}", "1", "1", run.id,
                   "code", moment, moment, fold(text))  # fmt: skip
            buffer.write("\t".join(row) + "\n")
        with cursor.copy(f"COPY facts_fact ({columns}) FROM STDIN") as copy:
            copy.write(buffer.getvalue())
        cursor.execute("CREATE INDEX fact_search_gin ON facts_fact USING gin (search_vector)")
        cursor.execute(
            "INSERT INTO facts_factversion (workspace_id, agent_id, fact_id, version, path, "
            "text, tags, confidence, run_id, written_by, created_at) SELECT workspace_id, "
            "agent_id, id, version, path, text, tags, confidence, run_id, written_by, "
            "updated_at FROM facts_fact"
        )
        cursor.execute(
            "INSERT INTO facts_factquota (workspace_id, agent_id, scope, count) "
            "VALUES (%s, %s, '', %s)",
            [agent.workspace_id, agent.id, FACTS],
        )
        cursor.execute("VACUUM ANALYZE facts_fact")
        cursor.execute("VACUUM ANALYZE facts_factversion")
    return time.perf_counter() - started


def server(database_url: str):
    # Room for the write measurement beyond the 100,000 loaded facts.
    room = {"MEMORYHUB_FACTS_MAX_FACTS_PER_AGENT": str(FACTS + 10 * WRITES)}
    return common.server(database_url, room)


_ms = common.percentiles


def ts_rank_seconds(scope, query: str) -> float:
    """The naive search, every match ranked by ``ts_rank``, as raw SQL (the baseline)."""
    from facts import search
    from facts.paths import Folder
    from facts.scope import under

    queryset = search.ranked_queryset(under(scope.facts(), [Folder("", None, False)]), query, 5)
    sql, params = queryset.query.sql_with_params()
    with connection.cursor() as cursor:
        started = time.perf_counter()
        cursor.execute(sql, params)
        cursor.fetchall()
        return time.perf_counter() - started


def _raw_sql_seconds(scope, query: str) -> float:
    """The same search without HTTP: the ranking's SQL statements and the row load."""
    from facts.paths import Folder
    from facts.services.reading import search_facts

    started = time.perf_counter()
    search_facts(scope, query, folders=[Folder("", None, False)], k=5)
    return time.perf_counter() - started


def _query_sets(rng: random.Random, words: list[str]) -> dict[str, list[str]]:
    """1-, 2- and 4-word queries drawn uniformly from the vocabulary, and, for the worst
    case, the ten most frequent words alone (each in about half of the facts)."""
    sets = {
        f"{size}_word": [" ".join(rng.sample(words, size)) for _ in range(QUERIES_PER_SIZE)]
        for size in (1, 2, 4)
    }
    sets["most_frequent_word"] = words[:10] * 3
    return sets


def measure_search(base: str, token: str, scope, rng: random.Random, words: list[str]) -> dict:
    client = common.Client(base, {"x-agentos-run-token": token})
    figures = {}
    for name, queries in _query_sets(rng, words).items():
        for query in queries[:10]:  # warm both paths up
            client.request("POST", "/v0/memory/search", {"query": query})
            _raw_sql_seconds(scope, query)
        http, raw, hits = [], [], 0
        for query in queries:
            started = time.perf_counter()
            status, answer = client.request("POST", "/v0/memory/search", {"query": query})
            http.append(time.perf_counter() - started)
            assert status == 200, answer
            hits += bool(answer["facts"])
            raw.append(_raw_sql_seconds(scope, query))
        http_ms, raw_ms = _ms(http), _ms(raw)
        figures[name] = {
            "http": http_ms,
            "raw_sql": raw_ms,
            "http_over_sql_p50": round(http_ms["p50_ms"] / max(raw_ms["p50_ms"], 0.01), 2),
            "http_over_sql_p95": round(http_ms["p95_ms"] / max(raw_ms["p95_ms"], 0.01), 2),
            "queries_with_results": f"{hits}/{len(queries)}",
        }
    return figures


def measure_list(base: str, token: str) -> dict:
    session = requests.Session()
    session.headers["x-agentos-run-token"] = token
    samples, cursor = [], None
    for _ in range(LIST_REQUESTS):
        params = {"before": cursor} if cursor else {}
        started = time.perf_counter()
        response = session.get(base + "/v0/memory/facts", params=params)
        samples.append(time.perf_counter() - started)
        cursor = response.json()["next"]
    return {"limit": 50, **_ms(samples)}


def measure_baseline(base: str, token: str) -> dict:
    """GET one fact by id: the fixed cost of an HTTP request (auth, Django, DRF, gunicorn)."""
    client = common.Client(base, {"x-agentos-run-token": token})
    # Ids are random: take one from the list rather than guess it.
    fact_id = client.request("GET", "/v0/memory/facts?limit=1")[1]["facts"][0]["id"]
    samples = []
    for _ in range(LIST_REQUESTS):
        started = time.perf_counter()
        status, answer = client.request("GET", f"/v0/memory/facts/{fact_id}")
        samples.append(time.perf_counter() - started)
        assert status == 200, answer
    return _ms(samples)


def measure_writes(base: str, tokens: list[str]) -> dict:
    def write(token: str, count: int, label: str) -> None:
        session = requests.Session()
        session.headers["x-agentos-run-token"] = token
        for i in range(count):
            response = session.post(
                base + "/v0/memory/facts",
                json={"path": "bench/writes/", "text": f"Write {label} {i}: Ayşe prefers tea."},
            )
            assert response.status_code == 201, response.text

    started = time.perf_counter()
    write(tokens[0], WRITES, "serial")
    serial = WRITES / (time.perf_counter() - started)
    per_writer = WRITES // PARALLEL_WRITERS
    threads = [threading.Thread(target=write, args=(tokens[i + 1], per_writer, f"p{i}"))
               for i in range(PARALLEL_WRITERS)]  # fmt: skip
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    parallel = per_writer * PARALLEL_WRITERS / (time.perf_counter() - started)
    return {"one_client_per_s": round(serial, 1),
            f"{PARALLEL_WRITERS}_clients_per_s": round(parallel, 1)}  # fmt: skip


def search_plan(scope, word: str) -> str:
    from facts import search
    from facts.paths import Folder
    from facts.scope import under

    queryset = search.ranked_queryset(under(scope.facts(), [Folder("", None, False)]), word, 5)
    return queryset.explain()


def run(results: dict) -> None:
    from facts.scope import for_run
    from memoryhub.principals import Principal
    from threads.services.runs import accept_run

    rng = random.Random(SEED)
    started = time.perf_counter()
    words = _vocabulary(rng)
    with own_database() as database_url:
        agent, run_, token = _setup()
        load_seconds = load_facts(agent, run_, rng, words)
        print(f"loaded {FACTS} facts in {load_seconds:.1f}s", flush=True)
        scope = for_run(Principal.for_run(run_))
        plan = search_plan(scope, words[len(words) // 2])  # a mid-frequency word
        writers = [token] + [
            accept_run(Principal.system(agent.workspace), run_.thread_id).token
            for _ in range(PARALLEL_WRITERS)
        ]
        connections.close_all()
        with server(database_url) as base:
            search_figures = measure_search(base, token, scope, rng, words)
            list_figures = measure_list(base, token)
            baseline = measure_baseline(base, token)
            write_figures = measure_writes(base, writers)
    targeted = [search_figures[f"{size}_word"] for size in (1, 2, 4)]
    worst_p95 = max(f["http"]["p95_ms"] for f in targeted)
    worst_ratio = max(f["http_over_sql_p50"] for f in targeted)
    figures = {
        "facts": FACTS,
        "distinct_words": VOCABULARY,
        "load_seconds": round(load_seconds, 1),
        "search": search_figures,
        "list": list_figures,
        "get_one_fact_http": baseline,
        "writes": write_figures,
        "search_uses_gin_index": "fact_search_gin" in plan,
        "targets": {
            "search_p95_under_25ms": worst_p95 < 25,
            "http_within_3x_sql": worst_ratio <= 3,
        },
        "seconds": round(time.perf_counter() - started, 1),
    }
    results["facts"] = figures
    for size, f in search_figures.items():
        print(f"search {size}: HTTP p50 {f['http']['p50_ms']} ms p95 {f['http']['p95_ms']} ms"
              f" | SQL p50 {f['raw_sql']['p50_ms']} ms p95 {f['raw_sql']['p95_ms']} ms"
              f" | {f['queries_with_results']} with results")  # fmt: skip
    print(
        f"list p50 {list_figures['p50_ms']} ms; writes {write_figures}; "
        f"GIN used: {figures['search_uses_gin_index']}; targets {figures['targets']}"
    )
