"""memoryhub: the project package and shared kernel.

Nothing is imported here, so that ``memoryhub.client`` stays free of Django and Celery. The
Celery app lives in ``memoryhub.celery`` (``celery -A memoryhub`` finds it there) and the
tasks bind to it explicitly.
"""
