"""File memories: write throughput on one contended file, and context-block build time.

Runs in its own database ``mh_bench_files`` (dropped and created afresh, then migrated),
with seeded content, so that runs are comparable and leave the other databases alone.
"""

from __future__ import annotations

import random
import statistics
import threading
import time

from django.db import connection

from bench import common

DATABASE = "mh_bench_files"
WRITERS = 8
WRITES_PER_WRITER = 40
CONTEXT_FILES = 500
CONTEXT_ROUNDS = 15
SEED = 4


def own_database():
    return common.own_database(DATABASE)


def _setup():
    from memoryhub.models import Thread
    from memoryhub.principals import Principal
    from memoryhub.services import agents, memories
    from memoryhub.services.workspaces import create_workspace

    workspace = create_workspace("bench")
    principal = Principal.system(workspace)
    agent = agents.create(principal, name="bench")
    memory = memories.create(principal, name="bench", always_load=["README.md"])

    def new_thread() -> str:
        return Thread.objects.create(workspace=workspace, agent=agent).id

    return principal, memory, new_thread


def contended_writes(principal, memory) -> dict:
    """8 writers append to one file, each retrying on 412 until its writes land."""
    from filememory.models import File
    from filememory.representations import file_etag
    from filememory.services.files import put_file
    from filememory.services.writes import Actor
    from memoryhub.errors import ApiError

    actor = Actor(principal)
    put_file(actor, memory.id, "log.md", "", None)
    barrier = threading.Barrier(WRITERS + 1)
    conflicts = [0] * WRITERS

    def writer(index: int) -> None:
        try:
            barrier.wait()
            for n in range(WRITES_PER_WRITER):
                while True:
                    current = File.objects.get(memory=memory, path="log.md")
                    line = f"writer {index} write {n}\n"
                    content = (current.content + line)[-4000:]
                    try:
                        put_file(actor, memory.id, "log.md", content, file_etag(current))
                        break
                    except ApiError as error:
                        if error.status != 412:
                            raise
                        conflicts[index] += 1
        finally:
            connection.close()

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(WRITERS)]
    for thread in threads:
        thread.start()
    barrier.wait()
    started = time.perf_counter()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - started
    writes = WRITERS * WRITES_PER_WRITER
    final = File.objects.get(memory=memory, path="log.md")
    assert final.version == writes + 1, "a write was lost"
    return {
        "writers": WRITERS,
        "writes": writes,
        "seconds": round(elapsed, 3),
        "writes_per_second": round(writes / elapsed, 1),
        "conflicts_412": sum(conflicts),
    }


def context_build(principal, memory, new_thread) -> dict:
    """Build time of the block for a memory of 500 files: full, then incremental."""
    from filememory.context import file_context_block
    from filememory.models import File
    from filememory.representations import file_etag
    from filememory.services.files import put_file
    from filememory.services.writes import Actor

    rng = random.Random(SEED)
    actor = Actor(principal)
    put_file(actor, memory.id, "README.md", "Start here.\n" * 40, None)
    for i in range(CONTEXT_FILES - 1):
        words = " ".join(rng.choice(["alpha", "beta", "gamma", "delta"]) for _ in range(60))
        put_file(actor, memory.id, f"topics/{i // 50:02}/note-{i:03}.md", words, None)
    budget = 32 * 1024

    full_times, incremental_times, sizes = [], [], []
    for _ in range(CONTEXT_ROUNDS):
        thread_id = new_thread()
        started = time.perf_counter()
        block = file_context_block(memory.id, thread_id=thread_id, budget_bytes=budget, full=True)
        full_times.append(time.perf_counter() - started)
        sizes.append(len(block.encode()))
        for path in rng.sample(sorted(File.objects.values_list("path", flat=True)), 10):
            current = File.objects.get(memory=memory, path=path)
            put_file(actor, memory.id, path, current.content + " more", file_etag(current))
        started = time.perf_counter()
        file_context_block(memory.id, thread_id=thread_id, budget_bytes=budget, full=False)
        incremental_times.append(time.perf_counter() - started)
    return {
        "files": File.objects.filter(memory=memory).count(),
        "budget_bytes": budget,
        "block_bytes": max(sizes),
        "full_ms_median": round(statistics.median(full_times) * 1000, 2),
        "full_ms_max": round(max(full_times) * 1000, 2),
        "incremental_10_changed_ms_median": round(statistics.median(incremental_times) * 1000, 2),
    }


def run(results: dict) -> None:
    with own_database():
        principal, memory, new_thread = _setup()
        figures = {
            "contended_writes": contended_writes(principal, memory),
            "context_block": context_build(principal, memory, new_thread),
        }
    results["files"] = figures
    for name, values in figures.items():
        print(f"files.{name}: {values}", flush=True)
