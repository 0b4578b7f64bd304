"""The deployment's memory.* / outbox.* / facts.* settings.

Each setting has the documented default and can be overridden by an environment
variable named after it: ``memory.recall_seconds`` -> ``MEMORYHUB_MEMORY_RECALL_SECONDS``.
Code reads them through :func:`setting` so that tests can override them with
Django's ``override_settings(MEMORYHUB_SETTINGS=...)``.
"""

from __future__ import annotations

import os
from typing import Any

from django.conf import settings as django_settings

# name -> default. The type of the default is the type of the setting.
DEFAULTS: dict[str, Any] = {
    "memory.record_chars": 8000,
    "memory.recall_limit": 5,
    "memory.recall_bytes": 8 * 1024,
    "memory.recall_seconds": 2.0,
    "memory.mounts_per_thread": 8,
    "memory.context_bytes": 32 * 1024,
    "memory.always_load_bytes": 16 * 1024,
    "memory.max_file_bytes": 64 * 1024,
    "memory.revisions_per_file": 10,
    "memory.max_total_bytes": 32 * 1024 * 1024,
    "memory.guide_bytes": 4 * 1024,
    "memory.default_guide.file": None,
    "memory.default_guide.record": None,
    "outbox.defaults.max_attempts": 5,
    "facts.max_body_bytes": 64 * 1024,
    "facts.max_facts_per_agent": 100_000,
    # The in-process postings index (facts.postings): memories from this many facts, and
    # at most this many postings per server process (0: no index).
    "facts.index_min_facts": 2_000,
    "facts.index_max_postings": 5_000_000,
    "outbound.allow_private": False,
    "outbound.allow_http": False,
    # MCP sessions over HTTP one credential (an API key, a run token) may hold open at once.
    "mcp.sessions_per_credential": 32,
}

# Settings whose environment variable has a name of its own (documented in the README).
ENV_NAMES = {
    "outbound.allow_private": "MEMORYHUB_OUTBOUND_ALLOW_PRIVATE",
    "outbound.allow_http": "MEMORYHUB_OUTBOUND_ALLOW_HTTP",
}


def env_name(name: str) -> str:
    return ENV_NAMES.get(name) or "MEMORYHUB_" + name.upper().replace(".", "_")


def _parse(raw: str, default: Any) -> Any:
    if isinstance(default, bool):
        return raw.strip().lower() in {"1", "true", "yes", "on"}
    if isinstance(default, int):
        return int(raw)
    if isinstance(default, float):
        return float(raw)
    return raw


def load_from_environment(environ: dict[str, str] | None = None) -> dict[str, Any]:
    """Every setting with its default, overridden where the environment says so."""
    environ = os.environ if environ is None else environ
    values = {}
    for name, default in DEFAULTS.items():
        raw = environ.get(env_name(name))
        values[name] = default if raw is None else _parse(raw, default)
    return values


def setting(name: str) -> Any:
    """The value in force for one setting (KeyError for a name that does not exist)."""
    configured = getattr(django_settings, "MEMORYHUB_SETTINGS", {})
    if name in configured:
        return configured[name]
    return DEFAULTS[name]
