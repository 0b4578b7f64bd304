"""Run acceptance with eight mounts: four file memories of 100 files, four record memories.

The record memories live on the local self-hosted mem0 stand-in (support/fakes) on
loopback; runs are accepted over HTTP against a real gunicorn. Each run of a new thread gets
the full context (first sight of every memory) within the 32 KiB budget; a second run on the
same thread gets only what changed. Figures: p50/p95 of both.
"""

from __future__ import annotations

import random
import time

import requests

from bench.common import own_database, percentiles, server

FILE_MEMORIES = 4
FILES_PER_MEMORY = 100
RECORD_MEMORIES = 4
RECORDS_PER_MEMORY = 30
RUNS = 40
SEED = 6
WORDS = [
    "customer",
    "invoice",
    "prefers",
    "metric",
    "units",
    "english",
    "turkish",
    "delivery",
    "friday",
    "meeting",
    "contract",
    "renewal",
    "discount",
    "support",
    "ticket",
    "priority",
    "escalation",
]


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words))


def _memories(principal, provider, rng: random.Random) -> list[dict]:
    from filememory.services.files import put_file
    from filememory.services.writes import Actor
    from memoryhub.services import memories
    from records.services.records import add_record

    mounts, actor = [], Actor(principal)
    for m in range(FILE_MEMORIES):
        memory = memories.create(principal, name=f"files {m}", always_load=["README.md"])
        put_file(actor, memory.id, "README.md", _text(rng, 200), if_match=None)
        for f in range(FILES_PER_MEMORY):
            put_file(actor, memory.id, f"topic/{f:03}.md", _text(rng, 60), if_match=None)
        mounts.append({"name": f"files-{m}", "memory_id": memory.id, "access": "write"})
    for m in range(RECORD_MEMORIES):
        memory = memories.create(
            principal, name=f"records {m}", type="mem0_oss", provider_id=provider.id
        )
        for _ in range(RECORDS_PER_MEMORY):
            add_record(principal, memory.id, _text(rng, 12))
        mounts.append({"name": f"records-{m}", "memory_id": memory.id, "access": "write"})
    return mounts


def _accept(base: str, key: str, thread_id: str, text: str) -> tuple[float, dict]:
    started = time.perf_counter()
    response = requests.post(
        f"{base}/api/v1/threads/{thread_id}/runs",
        json={"input": text},
        headers={"Authorization": f"Bearer {key}"},
        timeout=30,
    )
    elapsed = time.perf_counter() - started
    response.raise_for_status()
    return elapsed, response.json()


def run(results: dict) -> None:
    from django.test import override_settings

    from memoryhub.conf import load_from_environment
    from memoryhub.principals import Principal
    from memoryhub.services import agents
    from memoryhub.services.workspaces import create_api_key, create_workspace
    from records.services.providers import add_provider
    from support.fakes.mem0 import OssServer

    rng = random.Random(SEED)
    allowed = {
        **load_from_environment(),
        "outbound.allow_private": True,
        "outbound.allow_http": True,
    }
    mem0 = OssServer(api_key="bench").start()
    try:
        with own_database("mh_bench_runs") as url, override_settings(MEMORYHUB_SETTINGS=allowed):
            workspace = create_workspace("bench")
            principal = Principal.system(workspace)
            _, key = create_api_key(workspace, "write")
            provider = add_provider(
                principal,
                type="mem0_oss",
                name="local",
                config={"base_url": mem0.url},
                credential={"api_key": "bench"},
            )
            mounts = _memories(principal, provider, rng)
            agent = agents.create(principal, name="bench")
            env = {"MEMORYHUB_OUTBOUND_ALLOW_PRIVATE": "1", "MEMORYHUB_OUTBOUND_ALLOW_HTTP": "1"}
            with server(url, env) as base:
                first, second, sizes = [], [], []
                for _ in range(RUNS):
                    thread = requests.post(
                        f"{base}/api/v1/threads",
                        json={"agent_id": agent.id, "memories": mounts},
                        headers={"Authorization": f"Bearer {key}"},
                        timeout=30,
                    ).json()
                    elapsed, answer = _accept(base, key, thread["id"], _text(rng, 8))
                    first.append(elapsed)
                    sizes.append(len(answer["context"].encode()))
                    second.append(_accept(base, key, thread["id"], _text(rng, 8))[0])
    finally:
        mem0.stop()
    figures = {
        "mounts": len(mounts),
        "first_run_full_context": percentiles(first),
        "second_run_changes_only": percentiles(second),
        "context_bytes_p50": sorted(sizes)[len(sizes) // 2],
    }
    print(figures)
    results["runs"] = figures
