"""The ``steptp`` command line: the pipeline without a database.

One dispatcher (``main``) and one small module of subcommands per layer, so that ``steptp check`` never
imports TVM and ``steptp translate`` is the only command that imports torch. Anything that touches the
database is a ``manage.py`` command instead.
"""
