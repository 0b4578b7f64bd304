"""After a load run: read the database and prove what the runtimes were told.

Each check answers a list of failures, each naming its check and what is wrong. Counters,
term statistics and file byte counters are checked by the services ``manage.py verify``
runs; fact counters are summed over every counter row of a memory (a memory may have
several rows).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Mapping

from django.db import connection

from bench.load.journal import Journal
from facts.services import checks as fact_checks
from filememory.services import checks as file_checks
from memoryhub.models import Run
from records.models import PurgeJob


def check(journal: Journal, records: Mapping[str, str]) -> list[str]:
    """Every failure found; ``records`` is the mem0 server's store (record id -> text)."""
    versions = _fact_versions()
    checks: list[Callable[[], list[str]]] = [
        lambda: [f"server: {problem}" for problem in journal.problems],
        lambda: acknowledged_facts(journal, versions),
        lambda: gapless_versions(versions),
        fact_counters,
        term_statistics,
        file_counters,
        lambda: idempotency_keys(journal, versions),
        lambda: tool_calls(journal, versions, records),
        lambda: file_edits(journal),
        gapless_file_versions,
        lambda: record_writes(journal, records),
        lambda: ended_runs(journal),
        lambda: finished_purges(journal, records),
        lambda: refused_writes(journal, versions),
    ]
    return [failure for one in checks for failure in one()]


def _rows(sql: str, params: object = None) -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def _fact_versions() -> list[tuple[int, int, str, str | None, str]]:
    """(fact pk, version, text, key, run id) of every stored version."""
    return _rows("SELECT fact_id, version, text, key, run_id FROM facts_factversion")


def _name(pk: int) -> str:
    return f"m_{pk}"


def _marker_counts(texts: list[str], markers: set[str]) -> Counter:
    """How often each marker occurs in ``texts`` (markers are whole words)."""
    found: Counter = Counter()
    for text in texts:
        for word in text.split():
            if word in markers:
                found[word] += 1
    return found


def acknowledged_facts(journal: Journal, versions: list[tuple]) -> list[str]:
    """Each acknowledged fact write is stored once, as the version it was answered with."""
    stored: Counter = Counter((pk, version) for pk, version, *_ in versions)
    text_of = {(pk, version): text for pk, version, text, *_ in versions}
    markers = {marker for *_, marker in journal.facts}
    holding = _marker_counts([text for _, _, text, *_ in versions], markers)
    failures = []
    for pk, version, marker in journal.facts:
        n = stored[(pk, version)]
        if n == 0:
            failures.append(f"acknowledged_writes: fact {_name(pk)} version {version} missing")
        elif marker not in text_of[(pk, version)].split():
            failures.append(
                f"acknowledged_writes: fact {_name(pk)} version {version} lost its text {marker}"
            )
        if holding[marker] > 1:
            failures.append(
                f"acknowledged_writes: the write {marker} ({_name(pk)} v{version}) is stored "
                f"{holding[marker]} times"
            )
    return failures


def gapless_versions(versions: list[tuple]) -> list[str]:
    """Every fact's versions are 1..n, each once, and the fact row is at version n."""
    by_fact: dict[int, list[int]] = defaultdict(list)
    for pk, version, *_ in versions:
        by_fact[pk].append(version)
    current = dict(_rows("SELECT id, version FROM facts_fact"))
    failures = []
    for pk, numbers in sorted(by_fact.items()):
        doubled = sorted(n for n, times in Counter(numbers).items() if times > 1)
        if doubled:
            failures.append(f"fact_versions: {_name(pk)} has version(s) {doubled} twice or more")
        missing = sorted(set(range(1, max(numbers) + 1)) - set(numbers))
        if missing:
            failures.append(f"fact_versions: {_name(pk)} lacks version(s) {missing}")
        if pk in current and current[pk] != max(numbers):
            failures.append(
                f"fact_versions: {_name(pk)} is at version {current[pk]} but its newest kept "
                f"version is {max(numbers)}"
            )
    for pk in sorted(set(current) - set(by_fact)):
        failures.append(f"fact_versions: {_name(pk)} has no versions")
    return failures


def fact_counters() -> list[str]:
    """Each memory's counter rows sum to its facts (the ``verify`` check)."""
    return [
        f"fact_counters: {d.object} counts {d.stored or 0} facts, holds {d.expected}"
        for d in fact_checks.counter_differences()
    ]


def term_statistics() -> list[str]:
    return [
        f"term_statistics: {d.object}: {d.stored}, expected {d.expected}"
        for d in fact_checks.term_differences()
    ]


def file_counters() -> list[str]:
    return [
        f"file_counters: {d.object} {d.check} is {d.stored}, the files sum to {d.expected}"
        for d in file_checks.counter_differences()
    ]


def idempotency_keys(journal: Journal, versions: list[tuple]) -> list[str]:
    """Each acknowledged key made exactly one version: the one it was answered with."""
    made: dict[tuple[str, str], list[tuple[int, int]]] = defaultdict(list)
    for pk, version, _, key, run_id in versions:
        if key is not None:
            made[(run_id, key)].append((pk, version))
    failures = []
    for (run_id, key), writes in sorted(made.items()):
        if len(writes) > 1:
            failures.append(f"idempotency_keys: {run_id} key {key} executed {len(writes)} times")
    for run_id, key, pk, version in journal.keys:
        writes = made.get((run_id, key), [])
        if not writes:
            failures.append(f"idempotency_keys: {run_id} key {key} missing")
        elif writes[0] != (pk, version):
            failures.append(
                f"idempotency_keys: {run_id} key {key} answered {_name(pk)} v{version}, "
                f"stored {_name(writes[0][0])} v{writes[0][1]}"
            )
    return failures


def tool_calls(journal: Journal, versions: list[tuple], records: Mapping[str, str]) -> list[str]:
    """Each acknowledged tool call is recorded once, done, and its write happened once."""
    rows = _rows("SELECT run_id, call_id, status FROM threads_toolcall")
    recorded = Counter((run, call) for run, call, _ in rows)
    status = {(run, call): state for run, call, state in rows}
    markers = {marker for *_, marker in journal.tool_calls}
    texts = {
        "fact": [text for _, _, text, *_ in versions],
        "file": [content for (content,) in _rows("SELECT content FROM filememory_file")],
        "record": list(records.values()),
    }
    held = {kind: _marker_counts(found, markers) for kind, found in texts.items()}
    failures = []
    for (run, call), n in sorted(recorded.items()):
        if n > 1:
            failures.append(f"tool_calls: {run} call {call} recorded {n} times")
    for run, call, kind, marker in journal.tool_calls:
        if recorded[(run, call)] == 0:
            failures.append(f"tool_calls: {run} call {call} not recorded")
        elif status[(run, call)] != "done":
            failures.append(f"tool_calls: {run} call {call} left {status[(run, call)]}")
        n = held[kind][marker]
        if n != 1:
            failures.append(f"tool_calls: {run} call {call} ({kind}) executed {n} times")
    return failures


def file_edits(journal: Journal) -> list[str]:
    """Each acknowledged edit's line is in its file once, at or after its version."""
    files = {
        (memory, path): (version, content.splitlines())
        for memory, path, version, content in _rows(
            "SELECT memory_id, path, version, content FROM filememory_file"
        )
    }
    counts = {name: Counter(lines) for name, (_, lines) in files.items()}
    failures = []
    for memory, path, version, marker in journal.files:
        if (memory, path) not in files:
            failures.append(f"file_edits: {memory}:{path} missing")
            continue
        n = counts[(memory, path)][marker]
        if n != 1:
            failures.append(f"file_edits: {memory}:{path} holds the edit {marker} {n} times")
        if files[(memory, path)][0] < version:
            failures.append(
                f"file_edits: {memory}:{path} is at version {files[(memory, path)][0]}, "
                f"an edit was answered version {version}"
            )
    return failures


def gapless_file_versions() -> list[str]:
    """A file's kept revisions are its newest versions, each once, up to its own version
    (older ones are pruned: ``memory.revisions_per_file``)."""
    kept: dict[int, list[int]] = defaultdict(list)
    for file_id, version in _rows(
        "SELECT file_id, version FROM filememory_revision WHERE version IS NOT NULL"
    ):
        kept[file_id].append(version)
    failures = []
    for file_id, memory, path, current in _rows(
        "SELECT id, memory_id, path, version FROM filememory_file ORDER BY id"
    ):
        versions = sorted(kept.get(file_id, []))
        expected = list(range(current - len(versions) + 1, current + 1))
        if versions != expected:
            failures.append(
                f"file_versions: {memory}:{path} at version {current} keeps revisions of "
                f"versions {versions}"
            )
    return failures


def record_writes(journal: Journal, records: Mapping[str, str]) -> list[str]:
    """Each acknowledged record is in mem0 once, with its text."""
    held = _marker_counts(list(records.values()), {marker for *_, marker in journal.records})
    failures = []
    for memory, record_id, marker in journal.records:
        if record_id and record_id not in records:
            failures.append(f"record_writes: {memory} record {record_id} missing")
        elif held[marker] != 1:
            failures.append(
                f"record_writes: {memory} holds the record {marker} {held[marker]} times"
            )
    return failures


def ended_runs(journal: Journal) -> list[str]:
    if not journal.runs:
        return []
    ended = set(Run.objects.filter(id__in=journal.runs, status="ended").values_list("id"))
    ended = {run for (run,) in ended}
    return [f"runs: {run} was ended but is not" for run in journal.runs if run not in ended]


def finished_purges(journal: Journal, records: Mapping[str, str]) -> list[str]:
    """Each deleted record memory's purge is done, and mem0 no longer holds its record."""
    if not journal.purges:
        return []
    memories = [memory for memory, _ in journal.purges]
    done = dict(PurgeJob.objects.filter(memory_id__in=memories).values_list("memory_id", "status"))
    left = _marker_counts(list(records.values()), {marker for _, marker in journal.purges})
    failures = []
    for memory, marker in journal.purges:
        if done.get(memory) != "done":
            failures.append(f"purges: {memory} is {done.get(memory, 'without a purge job')}")
        if left[marker]:
            failures.append(f"purges: mem0 still holds the record {marker} of {memory}")
    return failures


def refused_writes(journal: Journal, versions: list[tuple]) -> list[str]:
    """A write answered as refused by an outage (503 ``unavailable``) did nothing: its text
    is in no fact version and no file. (A keyed save refused and sent again with its key is
    checked by ``idempotency_keys``: one version.)"""
    if not journal.refused:
        return []
    markers = {marker for _, marker in journal.refused}
    texts = {
        "fact": [text for _, _, text, *_ in versions],
        "file": [content for (content,) in _rows("SELECT content FROM filememory_file")],
    }
    held = {kind: _marker_counts(found, markers) for kind, found in texts.items()}
    return [
        f"refused_writes: the {kind} write {marker} was answered 503 but is stored"
        for kind, marker in journal.refused
        if held[kind][marker]
    ]
