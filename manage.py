#!/usr/bin/env python
"""Django's command-line utility for memoryhub."""

import os
import sys

from memoryhub.embedded import beside_make_run


def main() -> None:
    if beside_make_run(os.environ):
        print("manage.py: development settings, make run's database in .data/pg", file=sys.stderr)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
