"""The one place curation calls the libraries (``leir``, ``verifier``, ``tuner``) and changes models.

Views, the REST API, management commands and Celery tasks call functions here and never each other, so a
step is verified, reviewed or exported the same way whichever door the request came through. One module
per job: ``roles``, ``workloads`` (import, upload), ``translation`` (sandboxed), ``steps`` (record
import), ``edits`` (optimistic locking), ``reviews`` (overlap policy, queue), ``agreement`` (kappa),
``audit``, ``dispatch`` (the only module that sends Celery tasks).
"""
