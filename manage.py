#!/usr/bin/env python
"""Django's command-line utility for memoryhub."""

import os
import sys


def beside_make_run(environ: dict) -> bool:
    """With nothing configured, use ``make run``'s embedded database and development settings.

    Only when MEMORYHUB_ENV, SECRET_KEY and DATABASE_URL are all unset and the embedded
    PostgreSQL of this checkout (``.data/pg``) is running: a production setup sets at least
    DATABASE_URL, so it still refuses to start without SECRET_KEY.
    """
    if any(environ.get(name) for name in ("MEMORYHUB_ENV", "SECRET_KEY", "DATABASE_URL")):
        return False
    from memoryhub.embedded import running_database_url

    url = running_database_url()
    if url is None:
        return False
    environ["MEMORYHUB_ENV"] = "development"
    environ["DATABASE_URL"] = url
    return True


def main() -> None:
    if beside_make_run(os.environ):
        print("manage.py: development settings, make run's database in .data/pg", file=sys.stderr)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
