"""Record backends: one small interface (:class:`RecordBackend`), one class per mem0 API."""

from __future__ import annotations

from typing import Any

from records.backends.base import Page, Record, RecordBackend
from records.backends.oss import OssBackend
from records.backends.platform import DEFAULT_BASE_URL, PlatformBackend

BACKENDS: dict[str, type[RecordBackend]] = {
    PlatformBackend.type: PlatformBackend,
    OssBackend.type: OssBackend,
}

__all__ = ["BACKENDS", "DEFAULT_BASE_URL", "Page", "Record", "RecordBackend", "make_backend"]


def make_backend(
    provider_type: str, *, provider_id: str, config: dict, credential: dict | None, **extra: Any
) -> RecordBackend:
    """The backend for a provider's type, address, timeouts and (decrypted) credential."""
    return BACKENDS[provider_type](
        provider_id=provider_id,
        base_url=config.get("base_url") or DEFAULT_BASE_URL,
        credential=credential,
        connect_timeout=float(config.get("connect_timeout", 5.0)),
        read_timeout=float(config.get("read_timeout", 30.0)),
        **extra,
    )
