"""Wrong passwords at /panel/login/ and /admin/login/ are counted, per account and per
address, in the cache every process shares: past the limits the login is refused for a
while (429 with the form on the panel), the right password too.

The counts outlive a test's database, so each test uses usernames and addresses of its own.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
import time
import uuid

import pytest
from django.conf import settings
from django.test import Client

from memoryhub.errors import ApiError
from panel.services import logins
from tests.panel.conftest import PASSWORD, person

ACCOUNT_LIMIT, ADDRESS_LIMIT = 5, 20  # as the README says
WRONG = "didn't match"


def unique_address() -> str:
    """An address of the IPv6 documentation range, never used by another test or run."""
    return f"2001:db8:{uuid.uuid4().hex[:4]}::{uuid.uuid4().hex[:4]}"


def unique_name(prefix: str = "staff") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def browser(address: str) -> Client:
    """A browser at ``address``, behind the proxy (a trusted one: 127.0.0.1)."""
    return Client(HTTP_X_FORWARDED_FOR=address)


def log_in(client: Client, username: str, password: str, path: str = "/panel/login/"):
    return client.post(path, {"username": username, "password": password})


def is_logged_in(client: Client) -> bool:
    return "_auth_user_id" in client.session


@pytest.fixture
def staff(db):
    user = person(unique_name(), superuser=True)
    return user.username


def test_the_cache_is_shared_by_every_process():
    backend = settings.CACHES["default"]["BACKEND"]
    assert backend == "django.core.cache.backends.redis.RedisCache", backend


def test_five_wrong_passwords_lock_the_account_even_for_the_right_one(staff):
    client = browser(unique_address())
    for _ in range(ACCOUNT_LIMIT):
        response = log_in(client, staff, "wrong")
        assert response.status_code == 200 and WRONG in response.content.decode()
    response = log_in(client, staff, PASSWORD)
    assert response.status_code == 429
    page = response.content.decode()
    assert "Too many failed logins for this account. Try again in 15 minutes." in page
    assert WRONG not in page
    assert '<form method="post">' in page  # the form again, to try later
    assert 14 * 60 < int(response["Retry-After"]) <= 15 * 60
    assert not is_logged_in(client)


def test_the_lock_follows_the_account_to_every_address(staff):
    for _ in range(ACCOUNT_LIMIT):
        log_in(browser(unique_address()), staff, "wrong")
    elsewhere = browser(unique_address())
    assert log_in(elsewhere, staff, PASSWORD).status_code == 429
    assert not is_logged_in(elsewhere)


def test_a_successful_login_starts_the_account_afresh(staff):
    client = browser(unique_address())
    for _ in range(ACCOUNT_LIMIT - 1):
        log_in(client, staff, "wrong")
    assert log_in(client, staff, PASSWORD).status_code == 302
    assert is_logged_in(client)
    again = browser(unique_address())
    for _ in range(ACCOUNT_LIMIT):
        assert WRONG in log_in(again, staff, "wrong").content.decode()
    assert log_in(again, staff, PASSWORD).status_code == 429


def test_unknown_accounts_are_counted_as_known_ones(db):
    # A lock says nothing about whether an account exists.
    client = browser(unique_address())
    nobody = unique_name("nobody")
    for _ in range(ACCOUNT_LIMIT):
        assert log_in(client, nobody, "wrong").status_code == 200
    assert log_in(client, nobody, "wrong").status_code == 429


def test_twenty_failures_from_one_address_lock_the_address(staff):
    address = unique_address()
    for _ in range(ADDRESS_LIMIT):
        response = log_in(browser(address), unique_name("guess"), "wrong")
        assert response.status_code == 200
    refused = log_in(browser(address), staff, PASSWORD)
    assert refused.status_code == 429
    assert "Too many failed logins from your address." in refused.content.decode()
    # The account itself was not guessed at: from another address it logs in.
    elsewhere = browser(unique_address())
    assert log_in(elsewhere, staff, PASSWORD).status_code == 302
    assert is_logged_in(elsewhere)


def test_a_successful_login_does_not_clear_its_address(db):
    """One valid account cannot wipe out the trail of guesses at the others."""
    address = unique_address()
    mine = person(unique_name(), superuser=True).username
    rounds = ADDRESS_LIMIT // (ACCOUNT_LIMIT - 1) - 1
    for round_ in range(rounds):  # guesses, then a login of its own to reset them
        for _ in range(ACCOUNT_LIMIT - 1):
            log_in(browser(address), unique_name("guess"), "wrong")
        assert log_in(browser(address), mine, PASSWORD).status_code == 302, round_
    for _ in range(ADDRESS_LIMIT - rounds * (ACCOUNT_LIMIT - 1)):
        assert log_in(browser(address), unique_name("guess"), "wrong").status_code == 200
    assert log_in(browser(address), mine, PASSWORD).status_code == 429


def test_the_admin_login_counts_with_the_panel(staff):
    client = browser(unique_address())
    for _ in range(3):
        log_in(client, staff, "wrong")
    for _ in range(ACCOUNT_LIMIT - 3):
        response = log_in(client, staff, "wrong", path="/admin/login/")
        assert "Please enter the correct username and password" in response.content.decode()
    assert log_in(client, staff, PASSWORD).status_code == 429
    response = log_in(client, staff, PASSWORD, path="/admin/login/")
    assert "Too many failed logins for this account." in response.content.decode()
    assert not is_logged_in(client)
    assert client.get("/admin/").status_code == 302  # to the login page


def test_the_admin_login_alone_locks_too(staff):
    client = browser(unique_address())
    for _ in range(ACCOUNT_LIMIT):
        log_in(client, staff, "wrong", path="/admin/login/")
    response = log_in(client, staff, PASSWORD, path="/admin/login/")
    assert "Too many failed logins for this account." in response.content.decode()
    assert not is_logged_in(client)


def test_a_direct_client_cannot_choose_its_address(db):
    # Not from a trusted proxy: its X-Forwarded-For is its own invention.
    direct = f"198.51.100.{uuid.uuid4().int % 250 + 1}"
    for _ in range(ADDRESS_LIMIT):
        spoofed = Client(REMOTE_ADDR=direct, HTTP_X_FORWARDED_FOR=unique_address())
        assert log_in(spoofed, unique_name("guess"), "wrong").status_code == 200
    spoofed = Client(REMOTE_ADDR=direct, HTTP_X_FORWARDED_FOR=unique_address())
    assert log_in(spoofed, unique_name("guess"), "wrong").status_code == 429


@pytest.mark.parametrize("trusted", [["127.0.0.1", "::1"], ["*"]], ids=["default", "all"])
def test_behind_the_proxy_only_the_address_it_saw_counts(db, settings, trusted):
    # nginx appends the address it saw to whatever X-Forwarded-For the client sent; with
    # every sender trusted ("*") the entries left of it are still the client's own.
    settings.FORWARDED_ALLOW_IPS = trusted
    seen = unique_address()
    for _ in range(ADDRESS_LIMIT):
        client = Client(HTTP_X_FORWARDED_FOR=f"{unique_address()}, {seen}")
        assert log_in(client, unique_name("guess"), "wrong").status_code == 200
    client = Client(HTTP_X_FORWARDED_FOR=f"{unique_address()}, {seen}")
    assert log_in(client, unique_name("guess"), "wrong").status_code == 429


def test_parallel_guesses_cannot_slip_past_the_limit():
    name, allowed, refused = unique_name(), [], []

    def guess() -> None:
        try:
            logins.begin(name, unique_address())
            allowed.append(1)
        except ApiError as error:
            refused.append(error.status)

    threads = [threading.Thread(target=guess) for _ in range(3 * ACCOUNT_LIMIT)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(allowed) == ACCOUNT_LIMIT
    assert refused == [429] * (2 * ACCOUNT_LIMIT)


def test_another_process_sees_the_same_counts():
    # gunicorn runs several workers: a count one of them made binds the others.
    name = unique_name()
    for _ in range(ACCOUNT_LIMIT):
        logins.begin(name, unique_address())
    code = (
        "import django; django.setup()\n"
        "from memoryhub.errors import ApiError\n"
        "from panel.services import logins\n"
        "try:\n"
        f"    logins.begin({name!r}, '2001:db8::1')\n"
        "except ApiError as error:\n"
        "    print(error.status, error.message)\n"
    )
    out = subprocess.run(  # noqa: S603 - our own interpreter and code
        [sys.executable, "-c", code],
        env={
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "memoryhub.test_settings",
            "REDIS_URL": settings.CACHES["default"]["LOCATION"],
        },
        cwd=settings.BASE_DIR,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert out.stdout.startswith("429 Too many failed logins for this account."), out


def test_the_lock_ends_with_its_window(staff, monkeypatch):
    monkeypatch.setattr(logins, "WINDOW", 1)
    client = browser(unique_address())
    for _ in range(ACCOUNT_LIMIT):
        log_in(client, staff, "wrong")
    refused = log_in(client, staff, PASSWORD)
    assert refused.status_code == 429
    assert "Try again in 1 minute." in refused.content.decode()
    time.sleep(1.5)
    assert log_in(client, staff, PASSWORD).status_code == 302
    assert is_logged_in(client)


def test_logins_go_on_when_the_cache_is_down(staff, settings, caplog):
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": "redis://127.0.0.1:9/0",  # nothing listens there
            "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 1},
        }
    }
    client = browser(unique_address())
    assert WRONG in log_in(client, staff, "wrong").content.decode()
    assert log_in(client, staff, PASSWORD).status_code == 302
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert any("login throttle unavailable" in r.getMessage() for r in warnings)
