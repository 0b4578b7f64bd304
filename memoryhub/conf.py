"""The one reader of environment variables, and the deployment's memory.* / outbox.* /
facts.* / outbound.* / mcp.* settings.

:func:`env` reads every variable (settings.py's too), typed by its default: a value that
does not parse stops the start with ``ImproperlyConfigured`` naming the variable, rather
than run on a silent default ("ture" is not false).

Each memory.* (...) setting has the documented default and can be overridden by an
environment variable named after it: ``memory.recall_seconds`` ->
``MEMORYHUB_MEMORY_RECALL_SECONDS``. Code reads them through :func:`setting` so that tests
can override them with Django's ``override_settings(MEMORYHUB_SETTINGS=...)``.
"""

from __future__ import annotations

import math
import os
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any, NoReturn

from django.conf import settings as django_settings
from django.core.exceptions import ImproperlyConfigured

TRUE = frozenset({"1", "true", "yes", "on"})
FALSE = frozenset({"0", "false", "no", "off"})

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
    # MCP sessions over HTTP one credential (an API key, a run token) may hold open at once,
    # and all credentials of one workspace together (a run key can mint run tokens freely).
    "mcp.sessions_per_credential": 32,
    "mcp.sessions_per_workspace": 256,
}

# Settings whose environment variable has a name of its own (documented in docs/deployment.md).
ENV_NAMES = {
    "outbound.allow_private": "MEMORYHUB_OUTBOUND_ALLOW_PRIVATE",
    "outbound.allow_http": "MEMORYHUB_OUTBOUND_ALLOW_HTTP",
}


def env_name(name: str) -> str:
    return ENV_NAMES.get(name) or "MEMORYHUB_" + name.upper().replace(".", "_")


def env(
    name: str,
    default: Any,
    *,
    choices: Collection[str] = (),
    environ: Mapping[str, str] | None = None,
) -> Any:
    """The variable ``name`` as the type of ``default`` (``default`` when it is unset).

    bool: 1/0, true/false, yes/no, on/off; int; float; list: comma-separated, blanks
    dropped; Path; str (None: any text), one of ``choices`` when given.
    """
    raw = (os.environ if environ is None else environ).get(name)
    if raw is None:
        return default
    return parse(name, raw, default, choices)


def parse(name: str, raw: str, default: Any, choices: Collection[str] = ()) -> Any:
    """``raw`` as the type of ``default``; ImproperlyConfigured names ``name`` if it is not."""
    text = raw.strip()
    if isinstance(default, bool):  # before int: a bool is an int
        if text.lower() not in TRUE | FALSE:
            _refuse(name, "true or false (1/0, yes/no, on/off)", raw)
        return text.lower() in TRUE
    if isinstance(default, int):
        try:
            return int(text)
        except ValueError:
            _refuse(name, "an integer", raw)
    if isinstance(default, float):
        try:
            number = float(text)
        except ValueError:
            number = math.nan
        if not math.isfinite(number):
            _refuse(name, "a number", raw)
        return number
    if isinstance(default, list):
        return [item.strip() for item in raw.split(",") if item.strip()]
    if isinstance(default, Path):
        return Path(raw)
    if choices and raw not in choices:
        _refuse(name, "one of " + ", ".join(choices), raw)
    return raw


def _refuse(name: str, expected: str, raw: str) -> NoReturn:
    raise ImproperlyConfigured(f"{name} must be {expected}, got {raw!r}")


def load_from_environment(environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Every setting with its default, overridden where the environment says so."""
    return {
        name: env(env_name(name), default, environ=environ) for name, default in DEFAULTS.items()
    }


def setting(name: str) -> Any:
    """The value in force for one setting (KeyError for a name that does not exist)."""
    configured = getattr(django_settings, "MEMORYHUB_SETTINGS", {})
    if name in configured:
        return configured[name]
    return DEFAULTS[name]
