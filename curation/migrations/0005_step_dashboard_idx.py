"""A covering index for the dashboard's grouped step query (strategy × level × workload × statuses).

With it PostgreSQL answers the dashboard from the index (an index-only scan of a few MB) instead of reading
every step row with its trace and record (130 MB at 100,000 steps).
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("curation", "0004_trajectory_series")]
    operations = [
        migrations.AddIndex(
            model_name="step",
            index=models.Index(fields=["strategy", "level", "workload", "verification_status", "review_status"],
                               name="step_dashboard_idx"),
        ),
    ]
