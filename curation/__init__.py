"""The curation Django app: the database-backed side of Step-TP.

It holds the data model (workloads, program states, steps, verifications, reviews, audit events,
trajectories, exports), the services that call the ``leir``/``verifier``/``tuner`` libraries, the Celery
tasks that run that work on the queues, and the reviewer-facing pages and REST API. Views, API and tasks go
through ``curation.services`` and never call each other, so every entry point shares one implementation.
"""
