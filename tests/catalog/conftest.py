"""A stand-in record kind, so the catalog's kind-neutral rules are tested on their own."""

from __future__ import annotations

import pytest

from memoryhub import catalog
from memoryhub.errors import ApiError
from memoryhub.models import MemoryProvider


@pytest.fixture
def provider(tenant) -> MemoryProvider:
    return MemoryProvider.objects.create(
        workspace=tenant.workspace, type="mem0_platform", name="mem0"
    )


@pytest.fixture
def fake_record_kind():
    """A ``record`` kind of type ``fake_backend``; restores the real one afterwards."""
    previous = catalog._kinds.get("record")
    deleted: list[str] = []

    def prepare_create(principal, data):
        namespace = data.get("namespace")
        if namespace is not None and not isinstance(namespace, str):
            raise ApiError(422, "namespace must be a string")
        provider = MemoryProvider.objects.filter(
            workspace_id=principal.workspace_id, pk=data.get("provider_id")
        ).first()
        if provider is None:
            raise ApiError(422, "provider_id names no provider")
        return {"provider": provider, "namespace": namespace}

    kind = catalog.register_kind(
        catalog.MemoryKind(
            kind="record",
            types={"fake_backend"},
            prepare_create=prepare_create,
            create_fields={"provider_id", "namespace"},
            on_delete=lambda principal, memory: deleted.append(memory.id),
            always_load=False,
        )
    )
    kind.deleted = deleted
    yield kind
    if previous is None:
        catalog._kinds.pop("record", None)
    else:
        catalog.register_kind(previous)
