"""Settings for the test suite: the real settings, in the ``test`` environment."""

import os

os.environ.setdefault("MEMORYHUB_ENV", "test")
os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/15")

from memoryhub.settings import *  # noqa: E402,F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # fast test logins

# Counts kept in the cache (failed logins) start afresh with each test session: an earlier
# run's against the same Redis must not lock this one's personas out.
# Set once, in the environment, so that the processes a test starts share its counts.
os.environ.setdefault("MEMORYHUB_TEST_CACHE_PREFIX", f"memoryhub-test-{os.getpid()}")
CACHES["default"]["KEY_PREFIX"] = os.environ["MEMORYHUB_TEST_CACHE_PREFIX"]  # noqa: F405
