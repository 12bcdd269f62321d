# The step record's effect (schema version 2): estimate, measurement, verdict and follow-up.

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('curation', '0008_worker_heartbeat'),
    ]

    operations = [
        migrations.AddField(
            model_name='step',
            name='effect',
            field=models.JSONField(blank=True, default=dict, help_text='estimated and measured effect of the step, with its verdict'),
        ),
    ]
