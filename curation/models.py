"""Database models: Workload, ProgramState, Step, Verification, Review, AuditEvent, Trajectory, Export.

The database is the source of truth for every result (tasks write here, not to a Celery result backend);
see ARCHITECTURE.md "Data model" for the fields each one carries. None exist yet.
"""
