"""Settings for the test suite: the real settings, in the ``test`` environment."""

import os

os.environ.setdefault("MEMORYHUB_ENV", "test")
os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/15")

from memoryhub.settings import *  # noqa: E402,F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # fast test logins
