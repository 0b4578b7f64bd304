"""``make load``: simulated agent runtimes against a small cluster, then a check of the database.

``cluster`` starts two gunicorn web processes and two Celery workers on one fresh PostgreSQL
database and one Redis, and a local mem0 server; ``runtime`` is one simulated agent runtime;
``journal`` keeps every write the servers acknowledged; ``checker`` proves afterwards that
each is in the database exactly once and that derived data matches; ``driver`` ties them
together and ``__main__`` is the command line.
"""
