"""Public identifiers: a short prefix naming the kind of object and random characters."""

from __future__ import annotations

import hashlib
import re
import secrets

_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"  # Crockford's base32, lower case

ID_PATTERN = r"[a-z]{1,8}_[0-9a-z]{1,40}"
_ID_RE = re.compile(ID_PATTERN)


def new_id(prefix: str, length: int = 20) -> str:
    return prefix + "_" + "".join(secrets.choice(_ALPHABET) for _ in range(length))


def is_well_formed(value: str, prefix: str) -> bool:
    return bool(_ID_RE.fullmatch(value)) and value.startswith(prefix + "_")


def new_secret(prefix: str) -> str:
    """A high-entropy secret (API key, run token): shown once, stored as a hash."""
    return prefix + "_" + secrets.token_urlsafe(32)


def hash_secret(secret: str) -> str:
    # The secrets have 256 bits of entropy, so a fast unsalted hash cannot be brute-forced.
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()


def new_workspace_id() -> str:
    return new_id("ws")


def new_api_key_id() -> str:
    return new_id("key")


def new_agent_id() -> str:
    return new_id("agt")


def new_end_user_id() -> str:
    return new_id("usr")


def new_thread_id() -> str:
    return new_id("thr")


def new_run_id() -> str:
    return new_id("run")


def new_memory_id() -> str:
    return new_id("mem")


def new_memory_provider_id() -> str:
    return new_id("memprov")
