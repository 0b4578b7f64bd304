"""Record memories against the local mem0 stand-ins: client cost per call, parallel recall.

No database is needed: providers and memories are unsaved rows. Figures:

* add / search / list p50 and p95 through a backend against the fake self-hosted server
  on loopback (memoryhub's own cost per call plus one local HTTP round trip);
* recall of eight memories whose backend answers in 100 ms (parallel: ~100 ms, not 800);
* recall of eight memories whose backend hangs (bounded by ``memory.recall_seconds``).
"""

from __future__ import annotations

import statistics
import time

from django.test import override_settings

CALLS = 200


def _percentiles(samples: list[float]) -> dict:
    ordered = sorted(samples)
    return {
        "p50_ms": round(statistics.median(ordered) * 1000, 2),
        "p95_ms": round(ordered[int(len(ordered) * 0.95) - 1] * 1000, 2),
    }


def _timed(call, count: int = CALLS) -> dict:
    samples = []
    for index in range(count):
        started = time.perf_counter()
        call(index)
        samples.append(time.perf_counter() - started)
    return _percentiles(samples)


def _fixtures(server):
    from memoryhub import crypto
    from memoryhub.models import Memory, MemoryProvider

    provider = MemoryProvider(
        id="memprov_bench",
        type="mem0_oss",
        name="bench",
        config={"base_url": server.url},
        credential_encrypted=crypto.encrypt_json({"api_key": "bench"}),
    )
    memories = [
        Memory(
            id=f"mem_bench{i}",
            kind="record",
            name=f"m{i}",
            provider=provider,
            namespace=f"bench-{i}",
        )
        for i in range(8)
    ]
    return provider, memories


def run(results: dict) -> None:
    from memoryhub.conf import load_from_environment
    from records import context
    from records.services.providers import backend_of
    from support.fakes.mem0 import OssServer

    allowed = {
        **load_from_environment(),
        "outbound.allow_private": True,
        "outbound.allow_http": True,
    }
    server = OssServer(api_key="bench").start()
    try:
        with override_settings(MEMORYHUB_SETTINGS=allowed):
            provider, memories = _fixtures(server)
            backend = backend_of(provider)
            figures = {
                "add": _timed(lambda i: backend.add("bench-0", f"coffee fact {i}", {})),
                "search": _timed(lambda i: backend.search("bench-0", "coffee fact", 5)),
                "list": _timed(lambda i: backend.list("bench-0", limit=50, offset=0)),
            }
            for memory in memories[1:]:
                backend.add(memory.namespace, "coffee", {})
            server.delay = 0.1
            started = time.perf_counter()
            recalled = context.recall_many(memories, "coffee")
            figures["recall_8_memories_100ms_each"] = {
                "seconds": round(time.perf_counter() - started, 3),
                "memories_recalled": len(recalled),
            }
            server.delay = 30
            started = time.perf_counter()
            recalled = context.recall_many(memories, "coffee")
            figures["recall_8_hanging_memories"] = {
                "seconds": round(time.perf_counter() - started, 3),
                "recall_seconds": allowed["memory.recall_seconds"],
                "memories_recalled": len(recalled),
            }
    finally:
        server.stop()
    results["records"] = figures
    for name, values in figures.items():
        print(f"records.{name}: {values}", flush=True)
