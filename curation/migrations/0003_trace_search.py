"""A GIN index for full-text search on traces — PostgreSQL only (SQLite searches by substring)."""

from django.db import migrations

CREATE = ("CREATE INDEX IF NOT EXISTS step_trace_fts ON curation_step "
          "USING GIN (to_tsvector('english'::regconfig, COALESCE(trace_text, '')))")
DROP = "DROP INDEX IF EXISTS step_trace_fts"


def forwards(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(CREATE)


def backwards(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(DROP)


class Migration(migrations.Migration):
    dependencies = [("curation", "0002_roles")]
    operations = [migrations.RunPython(forwards, backwards)]
