"""The panel's personas: a viewer, an editor and an admin of Acme, a member of another
workspace only, and a superuser."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from panel.models import Membership, Role

PASSWORD = "correct horse battery staple"


def person(username: str, *, superuser: bool = False):
    user = get_user_model().objects.create_user(username, password=PASSWORD)
    user.is_staff = user.is_superuser = superuser
    user.save()
    return user


def logged_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def viewer(tenant):
    user = person("vera")
    Membership.objects.create(user=user, workspace=tenant.workspace, role=Role.VIEWER)
    return user


@pytest.fixture
def editor(tenant):
    user = person("ed")
    Membership.objects.create(user=user, workspace=tenant.workspace, role=Role.EDITOR)
    return user


@pytest.fixture
def panel_admin(tenant):
    user = person("ada")
    Membership.objects.create(user=user, workspace=tenant.workspace, role=Role.ADMIN)
    return user


@pytest.fixture
def outsider(other_tenant):
    user = person("otto")
    Membership.objects.create(user=user, workspace=other_tenant.workspace, role=Role.ADMIN)
    return user


@pytest.fixture
def superuser(db):
    return person("root", superuser=True)
