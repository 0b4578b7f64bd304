import pytest

from memoryhub.models import Memory


@pytest.fixture
def make_memory(tenant):
    """A catalog row of a file memory (the kinds' own data is not needed for mounts)."""

    def make(name: str = "Team", workspace=None, kind: str = "file") -> Memory:
        return Memory.objects.create(
            workspace=workspace or tenant.workspace,
            kind=kind,
            type="postgres" if kind == "file" else "mem0_oss",
            name=name,
        )

    return make
