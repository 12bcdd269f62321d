"""Trajectory.series: the best speedup after each verification, for the run page's chart."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("curation", "0003_trace_search")]
    operations = [
        migrations.AddField(
            model_name="trajectory",
            name="series",
            field=models.JSONField(blank=True, default=list,
                                   help_text="best speedup after each verification: [{verifications, seconds, "
                                             "best_speedup}], written while the run goes"),
        ),
    ]
