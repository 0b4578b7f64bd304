"""Fixtures of the record-memory tests: the fake mem0 servers and providers on them."""

from __future__ import annotations

import pytest

from memoryhub.models import Memory, MemoryProvider
from support.fakes.mem0 import OssServer, PlatformServer
from tests import factories

PLATFORM_KEY = "m0-secret-platform-key"
OSS_KEY = "m0sk_secret-user-key"
OSS_ADMIN_KEY = "secret-admin-key"


@pytest.fixture(autouse=True)
def allow_loopback(settings):
    """The fake servers listen on 127.0.0.1 over plain HTTP: allow exactly that here."""
    settings.MEMORYHUB_SETTINGS = {
        **settings.MEMORYHUB_SETTINGS,
        "outbound.allow_private": True,
        "outbound.allow_http": True,
    }


@pytest.fixture
def platform_server():
    server = PlatformServer(api_key=PLATFORM_KEY).start()
    yield server
    server.stop()


@pytest.fixture
def oss_server():
    server = OssServer(api_key=OSS_KEY, admin_key=OSS_ADMIN_KEY).start()
    yield server
    server.stop()


@pytest.fixture
def platform_provider(tenant, platform_server) -> MemoryProvider:
    return factories.create_provider(
        tenant.owner,
        {
            "type": "mem0_platform",
            "name": "platform",
            "config": {"base_url": platform_server.url, "read_timeout": 1},
            "credential": {"api_key": PLATFORM_KEY},
        },
    )


@pytest.fixture
def oss_provider(tenant, oss_server) -> MemoryProvider:
    return factories.create_provider(
        tenant.owner,
        {
            "type": "mem0_oss",
            "name": "self-hosted",
            "config": {"base_url": oss_server.url, "read_timeout": 1},
            "credential": {"api_key": OSS_KEY, "admin_api_key": OSS_ADMIN_KEY},
        },
    )


@pytest.fixture(params=["platform", "oss"])
def any_provider(request) -> MemoryProvider:
    """Each test that takes it runs once on each backend."""
    return request.getfixturevalue(f"{request.param}_provider")


@pytest.fixture
def server_of(platform_server, oss_server):
    def server(provider: MemoryProvider):
        return platform_server if provider.type == "mem0_platform" else oss_server

    return server


def record_memory(tenant, provider: MemoryProvider, namespace: str = "ns-1") -> Memory:
    return Memory.objects.create(
        workspace=tenant.workspace,
        kind="record",
        type=provider.type,
        name="User facts",
        provider=provider,
        namespace=namespace,
    )


@pytest.fixture
def memory(tenant, any_provider) -> Memory:
    return record_memory(tenant, any_provider)


@pytest.fixture
def eager_celery():
    """Tasks run at once in this process, errors raised (Celery's always-eager mode)."""
    from memoryhub.celery import app

    previous = app.conf.task_always_eager, app.conf.task_eager_propagates
    app.conf.task_always_eager = app.conf.task_eager_propagates = True
    yield app
    app.conf.task_always_eager, app.conf.task_eager_propagates = previous
