"""A small ``make load``: three runtimes for ten seconds against the whole cluster (two
gunicorns, two Celery workers, one PostgreSQL database of its own, Redis, local mem0)."""

from __future__ import annotations

import pytest

from tests.load.runs import load_run

pytestmark = pytest.mark.slow

# Every kind of call the issue names: runs, search, save, replace, keyed saves, file edits,
# tool calls (some sent twice), record writes, purges by the workers.
OPERATIONS = {
    "accept_run", "end_run", "search", "save", "replace", "keyed_save", "keyed_save_repeat",
    "file_edit", "file_tool", "fact_tool", "record_tool", "record_write", "purge",
    "write_after_end",
}  # fmt: skip
ACKNOWLEDGED = {"facts", "keys", "tool_calls", "files", "records", "runs", "purges"}


def test_a_small_load_run_ends_with_a_clean_check(tmp_path):
    load = load_run(tmp_path / "results.json", "--agents", "3", "--seconds", "10")
    assert load["verdict"] == "clean" and load["failures"] == []
    assert load["web_processes"] == 2 and load["celery_workers"] == 2
    assert {name for name, figures in load["operations"].items() if figures["n"]} >= OPERATIONS
    assert all(load["acknowledged"][kind] > 0 for kind in ACKNOWLEDGED), load["acknowledged"]
    for figures in load["operations"].values():
        assert figures["p50_ms"] <= figures["p95_ms"] <= figures["p99_ms"]
