"""Ranked fact search on real-looking text (issue 7), on PostgreSQL 15 and the embedded 16.

The workload, generated from a seed and loaded with COPY: a table of ``BENCH_SEARCH_FACTS``
facts (1,000,000 by default) of 51 agents, one of them with 100,000 facts and one with
10,000; text drawn from 10,000 words with Zipf exponent 1.0, 6-25 words a fact. Queries
come from the same distribution: 1, 2 and 4 words, a two-letter prefix, and two rare words
(uniform over the vocabulary). Then a run of one end user in a memory of 100,000 facts,
98% of them in 1,000 users' private folders.

For each query class: p50/p95/p99 over HTTP (a real gunicorn), the same search in process
(``facts.services.reading.search_facts``: its SQL and planning, no HTTP), and the naive
``ts_rank`` query in raw SQL as the baseline; the 10,000-fact agent beside the 100,000 one;
fact writes per second without the term statistics (before: the table loaded as issue 3
left it) and then with them (after: ``LATER_INDEXES`` built, the counts made, the
triggers on).

``BENCH_SEARCH_SERVERS``: ``local,embedded`` (default), the servers to run on; "local" is
the server of ``DATABASE_URL``, "embedded" a pgserver PostgreSQL 16 in a temporary
directory.
"""

from __future__ import annotations

import io
import os
import random
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from urllib.parse import quote

from django.db import connection, connections

from bench import bench_facts, common

DATABASE = "mh_bench_search"
TABLE_FACTS = int(os.environ.get("BENCH_SEARCH_FACTS", "1000000"))
BIG, SMALL, AGENTS = 100_000, 10_000, 51
QUERIES, BASELINE_QUERIES, SMALL_QUERIES = 500, 40, 200
PRIVATE_FACTS, PRIVATE_QUERIES = 100_000, 200
SEED = 7
# The indexes issue 7 added: writes are timed without them first, then with them.
LATER_INDEXES = ("fact_memory_terms_gin", "fact_owner_newest")
CLASSES = ("1_word", "2_words", "4_words", "two_letter_prefix", "2_rare_words")
SLOWEST = 5  # queries kept with their times, per class
_COLUMNS = ("workspace_id, agent_id, scope, path, text, tags, confidence, version, run_id, "
            "written_by, created_at, updated_at, search_text")  # fmt: skip


def _zipf(words: list[str]) -> list[float]:
    cumulative, total = [], 0.0
    for rank in range(len(words)):
        total += 1 / (rank + 1)
        cumulative.append(total)
    return cumulative


def _owners(rng: random.Random, agents: list) -> list:
    """Which agent each row belongs to, the agents' rows interleaved in time."""
    rest = max(TABLE_FACTS - BIG - SMALL, 0) // (len(agents) - 2)
    sizes = [BIG, SMALL] + [rest] * (len(agents) - 2)
    owners = [agent for agent, size in zip(agents, sizes, strict=True) for _ in range(size)]
    rng.shuffle(owners)
    return owners


def load(agents: list, run_id: str, rng: random.Random, words: list[str]) -> tuple[float, list]:
    """COPY the workload as issue 3 left the schema: no term statistics (their triggers
    off) and none of ``LATER_INDEXES``, which ``add_term_statistics`` adds later."""
    from facts.search import fold

    started = time.perf_counter()
    cumulative, base = _zipf(words), datetime(2026, 1, 1, tzinfo=UTC)
    owners = _owners(rng, agents)
    with connection.cursor() as cursor:
        cursor.execute("SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'facts_fact' "
                       "AND (indexdef LIKE '%%USING gin%%' OR indexname = ANY(%s))",
                       [list(LATER_INDEXES)])  # fmt: skip
        dropped = cursor.fetchall()
        for name, _ in dropped:
            cursor.execute(f"DROP INDEX {name}")
        cursor.execute("SET session_replication_role = replica")  # no triggers while loading
        for start in range(0, len(owners), 100_000):
            buffer = io.StringIO()
            for n in range(start, min(start + 100_000, len(owners))):
                agent, moment = owners[n], (base + timedelta(seconds=n)).isoformat()
                text = " ".join(rng.choices(words, cum_weights=cumulative, k=rng.randint(6, 25)))
                row = (agent.workspace_id, agent.id, "", "notes/", text, "{bench}", "1", "1",
                       run_id, "code", moment, moment, fold(text))  # fmt: skip
                buffer.write("\t".join(row) + "\n")
            with cursor.copy(f"COPY facts_fact ({_COLUMNS}) FROM STDIN") as copy:
                copy.write(buffer.getvalue())
        cursor.execute("SET session_replication_role = origin")
        cursor.execute("ALTER TABLE facts_fact DISABLE TRIGGER USER")
        cursor.execute("SET maintenance_work_mem = '512MB'")
        for name, definition in dropped:
            if name not in LATER_INDEXES:
                cursor.execute(definition)
        cursor.execute(
            "INSERT INTO facts_factquota (workspace_id, agent_id, scope, count) "
            "SELECT workspace_id, agent_id, scope, count(*) FROM facts_fact "
            "GROUP BY workspace_id, agent_id, scope"
        )
        cursor.execute("VACUUM ANALYZE facts_fact")
        cursor.execute("CHECKPOINT")
    later = [definition for name, definition in dropped if name in LATER_INDEXES]
    return time.perf_counter() - started, later


def add_term_statistics(later_indexes: list[str]) -> float:
    """What issue 7's migrations do: the keyed GIN index, the per-owner newest-first index,
    the counts, the triggers on."""
    from facts import terms

    started = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute("SET maintenance_work_mem = '512MB'")
        for definition in later_indexes:
            cursor.execute(definition)
        cursor.execute(terms.RECOUNT_SQL)
        cursor.execute("ALTER TABLE facts_fact ENABLE TRIGGER USER")
        cursor.execute("VACUUM ANALYZE facts_fact")
        cursor.execute("VACUUM ANALYZE facts_factterm")
        cursor.execute("CHECKPOINT")  # not in the middle of the writes measured next
    return time.perf_counter() - started


def query_sets(rng: random.Random, words: list[str], count: int) -> dict[str, list[str]]:
    cumulative = _zipf(words)

    def drawn(size: int) -> str:
        return " ".join(rng.choices(words, cum_weights=cumulative, k=size))

    return {
        "1_word": [drawn(1) for _ in range(count)],
        "2_words": [drawn(2) for _ in range(count)],
        "4_words": [drawn(4) for _ in range(count)],
        "two_letter_prefix": [drawn(1)[:2] for _ in range(count)],
        "2_rare_words": [" ".join(rng.sample(words, 2)) for _ in range(count)],
    }


def _timed(call: Callable[[str], object], queries: list[str]) -> dict:
    return in_turns({"": call}, queries)[""]


def in_turns(calls: dict[str, Callable[[str], object]], queries: list[str]) -> dict:
    """Each call's percentiles over the queries, and its slowest queries: after a warm-up,
    the calls are timed query by query in turn (who goes first alternates), so that a
    machine's drifting speed weighs on them alike."""
    order = list(calls)
    for query in queries[:10]:  # warm up
        for call in calls.values():
            call(query)
    samples: dict[str, list[float]] = {name: [] for name in calls}
    for n, query in enumerate(queries):
        for name in order if n % 2 == 0 else order[::-1]:
            started = time.perf_counter()
            calls[name](query)
            samples[name].append(time.perf_counter() - started)
    return {name: _summary(samples[name], queries) for name in calls}


def _summary(samples: list[float], queries: list[str]) -> dict:
    # What the tail is made of: the slowest queries, with their place in the sequence.
    slowest = sorted(range(len(samples)), key=samples.__getitem__)[-SLOWEST:][::-1]
    return {
        **common.percentiles(samples),
        "slowest": [[round(samples[n] * 1000, 2), n, queries[n]] for n in slowest],
    }


def _http(base: str, token: str) -> Callable[[str], object]:
    client = common.Client(base, {"x-agentos-run-token": token})

    def search(query: str) -> None:
        status, answer = client.request("POST", "/v0/memory/search", {"query": query})
        assert status == 200, answer

    return search


def _in_process(scope) -> Callable[[str], object]:
    from facts.paths import Folder
    from facts.services.reading import search_facts

    root = [Folder("", None, False)]
    return lambda query: search_facts(scope, query, folders=root, k=5)


def measure_queries(base: str, big: tuple, small: tuple, rng: random.Random, words) -> dict:
    """big, small: (scope, token) of the 100,000- and the 10,000-fact agent."""
    figures = {}
    for name, queries in query_sets(rng, words, QUERIES).items():
        http = _timed(_http(base, big[1]), queries)
        in_process = _timed(_in_process(big[0]), queries)
        naive = _timed(lambda q: bench_facts.ts_rank_seconds(big[0], q),
                       queries[:BASELINE_QUERIES])  # fmt: skip
        small_http = _timed(_http(base, small[1]), queries[:SMALL_QUERIES])
        small_in_process = _timed(_in_process(small[0]), queries[:SMALL_QUERIES])
        figures[name] = {
            "http": http,
            "in_process": in_process,
            "baseline_ts_rank_sql": naive,
            "baseline_over_in_process_p95": round(naive["p95_ms"] / in_process["p95_ms"], 1),
            "small_agent_http": small_http,
            "small_agent_in_process": small_in_process,
            "growth_10k_to_100k_http_p95": round(http["p95_ms"] / small_http["p95_ms"], 2),
            "growth_10k_to_100k_in_process_p95": round(
                in_process["p95_ms"] / small_in_process["p95_ms"], 2
            ),
        }
        print(f"  {name}: HTTP {http} | in process {in_process} | ts_rank SQL {naive} | "
              f"10k HTTP p95 {small_http['p95_ms']}", flush=True)  # fmt: skip
    return figures


def load_private(agent, me: str, run_id: str, rng: random.Random, words: list[str]) -> None:
    """PRIVATE_FACTS facts of one agent, all but 2% in the folders of 1,000 end users (``me``
    the first of them); COPY with the statistics' triggers on, as writes keep them."""
    from facts.search import fold

    cumulative, base = _zipf(words), datetime(2026, 1, 1, tzinfo=UTC)
    buffer = io.StringIO()
    for n in range(PRIVATE_FACTS):
        user = rng.randrange(1000) if rng.random() >= 0.02 else None
        owner = r"\N" if user is None else me if user == 0 else f"usr_bench{user}"
        path = "notes/" if user is None else f"users/u{user}/notes/"
        moment = (base + timedelta(seconds=n)).isoformat()
        text = " ".join(rng.choices(words, cum_weights=cumulative, k=rng.randint(6, 25)))
        row = (agent.workspace_id, agent.id, "", owner, path, text, "{bench}", "1", "1", run_id,
               "code", moment, moment, fold(text))  # fmt: skip
        buffer.write("\t".join(row) + "\n")
    with connection.cursor() as cursor:
        columns = _COLUMNS.replace("scope, path", "scope, owner_id, path")
        with cursor.copy(f"COPY facts_fact ({columns}) FROM STDIN") as copy:
            copy.write(buffer.getvalue())
        cursor.execute("ANALYZE facts_fact")
        cursor.execute("ANALYZE facts_factterm")


def measure_private(base: str, workspace, rng: random.Random, words: list[str]) -> dict:
    """A run of one end user in a memory that is mostly other users' folders: it sees the
    2% shared facts and its own ~100; the search should cost what that share does."""
    from facts.scope import for_run
    from memoryhub.principals import Principal
    from memoryhub.services import agents
    from threads.services.runs import accept_run
    from threads.services.threads import create_thread

    principal = Principal.system(workspace)
    agent = agents.create(principal, name="one of 1,000 users")
    accepted = accept_run(principal, create_thread(principal, agent.id, end_user="u0").id)
    load_private(agent, accepted.run.thread.end_user_id, accepted.run.id, rng, words)
    scope = for_run(Principal.for_run(accepted.run))
    figures = {}
    for name, queries in query_sets(rng, words, PRIVATE_QUERIES).items():
        http = _timed(_http(base, accepted.token), queries)
        in_process = _timed(_in_process(scope), queries)
        naive = _timed(lambda q: bench_facts.ts_rank_seconds(scope, q),
                       queries[:BASELINE_QUERIES])  # fmt: skip
        figures[name] = {"http": http, "in_process": in_process, "baseline_ts_rank_sql": naive}
        print(f"  one user of 1,000, {name}: HTTP {http} | in process {in_process} | "
              f"ts_rank SQL {naive}", flush=True)  # fmt: skip
    return figures


def measure_writes(base: str, tokens: list[str], later_indexes: list[str]) -> tuple[dict, float]:
    """Writes/s as issue 3 left them, then with the term statistics kept (same server,
    same table); and how long adding the statistics to the loaded table took."""
    bench_facts.measure_writes(base, tokens)  # warm-up: fresh workers, cold caches
    before = bench_facts.measure_writes(base, tokens)
    migration_seconds = add_term_statistics(later_indexes)
    bench_facts.measure_writes(base, tokens)  # warm-up again: the DDL reset cached plans
    after = bench_facts.measure_writes(base, tokens)
    slowdown = {
        f"slowdown_{name}": round(1 - after[name] / before[name], 3)
        for name in ("one_client_per_s", "4_clients_per_s")
    }
    figures = {"before_without_term_statistics": before, "after_with_term_statistics": after}
    return {**figures, **slowdown}, migration_seconds


@contextmanager
def _database(host: str, port: str, name: str = DATABASE) -> Iterator[str]:
    """A fresh, migrated database ``name`` on that server; yields its DATABASE_URL."""
    shared = connections.settings["default"]
    previous = shared.get("HOST"), shared.get("PORT")
    connections.close_all()
    for settings in (shared, connection.settings_dict):
        settings["HOST"], settings["PORT"] = host, port
    try:
        with common.own_database(name):
            user = shared.get("USER") or "postgres"
            yield f"postgres://{user}@{quote(str(host), safe='')}:{port}/{name}"
    finally:
        connections.close_all()
        for settings in (shared, connection.settings_dict):
            settings["HOST"], settings["PORT"] = previous


def _agents(count: int) -> tuple:
    """The bench agent (with a run), a 10,000-fact agent (with a run) and the others."""
    from memoryhub.principals import Principal
    from memoryhub.services import agents
    from threads.services.runs import accept_run
    from threads.services.threads import create_thread

    big, run, token = bench_facts._setup()
    principal = Principal.system(big.workspace)
    others = [agents.create(principal, name=f"agent {i}") for i in range(count - 1)]
    thread = create_thread(principal, others[0].id, end_user="bench-user")
    small_run = accept_run(principal, thread.id)
    writers = [accept_run(principal, run.thread_id).token for _ in range(4)]
    return [big, *others], run, token, small_run, [token, *writers]


def on_server(label: str, host: str, port: str) -> dict:
    from facts.scope import for_run
    from memoryhub.principals import Principal

    rng, started = random.Random(SEED), time.perf_counter()
    words = bench_facts._vocabulary(random.Random(SEED))
    with _database(host, port) as database_url:
        with connection.cursor() as cursor:
            cursor.execute("SHOW server_version")
            version = cursor.fetchone()[0]
        agents, run, token, small_run, writers = _agents(AGENTS)
        load_seconds, later_indexes = load(agents, run.id, rng, words)
        print(f"{label} (PostgreSQL {version}): loaded {TABLE_FACTS} facts in "
              f"{load_seconds:.0f}s", flush=True)  # fmt: skip
        big = (for_run(Principal.for_run(run)), token)
        small = (for_run(Principal.for_run(small_run.run)), small_run.token)
        connections.close_all()
        with bench_facts.server(database_url) as base:
            writes, migration_seconds = measure_writes(base, writers, later_indexes)
            print(f"  writes: {writes}", flush=True)
            queries = measure_queries(base, big, small, rng, words)
            private = measure_private(base, agents[0].workspace, rng, words)
    return {"server_version": version, "table_facts": TABLE_FACTS, "agents": AGENTS,
            "load_seconds": round(load_seconds, 1),
            "term_statistics_migration_seconds": round(migration_seconds, 1),
            "queries": queries, "one_user_of_1000": private, "writes": writes,
            "seconds": round(time.perf_counter() - started, 1)}  # fmt: skip


@contextmanager
def _embedded() -> Iterator[tuple[str, str]]:
    import pgserver

    with tempfile.TemporaryDirectory(prefix="bench-pg-") as directory:
        server = pgserver.get_server(directory, cleanup_mode="delete")
        try:
            info = server.get_postmaster_info()
            yield str(info.socket_dir), str(info.port)
        finally:
            server.cleanup()


def run(results: dict) -> None:
    servers = os.environ.get("BENCH_SEARCH_SERVERS", "local,embedded").split(",")
    figures: dict = {}
    shared = connections.settings["default"]
    if "local" in servers:
        local = shared.get("HOST") or "127.0.0.1", str(shared.get("PORT") or 5432)
        figures["local"] = on_server("local", *local)
        results["search"] = figures
    if "embedded" in servers:
        with _embedded() as (host, port):
            figures["embedded_pg16"] = on_server("embedded", host, port)
    results["search"] = figures
