"""The one place curation calls the libraries (``leir``, ``verifier``, ``tuner``) and changes models.

Views, the REST API, management commands and Celery tasks call functions here and never each other, so a
step is verified, reviewed or exported the same way whichever door the request came through.
"""
