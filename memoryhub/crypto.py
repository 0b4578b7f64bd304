"""Encryption of secrets at rest (memory provider credentials) with Fernet.

The key is ``settings.MEMORYHUB_CREDENTIAL_KEY`` (a Fernet key) when set, otherwise one
derived from ``SECRET_KEY``, so a deployment that rotates ``SECRET_KEY`` without setting a
credential key must re-enter its provider credentials.
"""

from __future__ import annotations

import base64
import hashlib
import json
from typing import Any

from cryptography.fernet import Fernet, InvalidToken
from django.conf import settings


class CredentialError(Exception):
    """A stored secret that cannot be decrypted with the configured key."""


def _fernet() -> Fernet:
    configured = getattr(settings, "MEMORYHUB_CREDENTIAL_KEY", "")
    if configured:
        return Fernet(configured.encode() if isinstance(configured, str) else configured)
    digest = hashlib.sha256(b"memoryhub.credentials:" + settings.SECRET_KEY.encode()).digest()
    return Fernet(base64.urlsafe_b64encode(digest))


def encrypt_json(value: Any) -> str:
    """The encrypted form of a JSON value; "" for None (nothing stored)."""
    if value is None:
        return ""
    return _fernet().encrypt(json.dumps(value, sort_keys=True).encode()).decode()


def decrypt_json(token: str) -> Any:
    """The JSON value behind :func:`encrypt_json`; None for ""."""
    if not token:
        return None
    try:
        return json.loads(_fernet().decrypt(token.encode()))
    except (InvalidToken, ValueError) as exc:
        raise CredentialError("the stored credential cannot be decrypted with this key") from exc


def check_key(app_configs: Any = None, **kwargs: Any) -> list:
    """A Django system check: a credential key that is no Fernet key stops the start."""
    from django.core import checks

    try:
        _fernet()
    except (ValueError, TypeError):
        return [
            checks.Error(
                "MEMORYHUB_CREDENTIAL_KEY is not a Fernet key (32 url-safe base64-encoded"
                " bytes); generate one with cryptography.fernet.Fernet.generate_key()",
                id="memoryhub.E101",
            )
        ]
    return []
