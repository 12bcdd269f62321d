# A workload's translation and generation state: uploads translate on a queue, so a source can be queued,
# translating, translated or failed (with the reason); existing rows with an error become failed.

from django.conf import settings
from django.db import migrations, models


def mark_failed(apps, schema_editor):
    apps.get_model("curation", "Workload").objects.exclude(translation_error="").update(
        translation_status="failed")


class Migration(migrations.Migration):

    dependencies = [
        ('curation', '0009_step_effect'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name='workload',
            name='generation_message',
            field=models.CharField(blank=True, max_length=300),
        ),
        migrations.AddField(
            model_name='workload',
            name='generation_status',
            field=models.CharField(blank=True, choices=[('', 'not asked for'), ('queued', 'queued'), ('running', 'running'), ('done', 'done'), ('failed', 'failed')], default='', max_length=16),
        ),
        migrations.AddField(
            model_name='workload',
            name='translation_status',
            field=models.CharField(choices=[('queued', 'queued'), ('translating', 'translating'), ('translated', 'translated'), ('failed', 'failed')], default='translated', max_length=16),
        ),
        migrations.RunPython(mark_failed, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name='workload',
            constraint=models.CheckConstraint(condition=models.Q(('translation_status__in', ['queued', 'translating', 'translated', 'failed'])), name='workload_translation_valid'),
        ),
        migrations.AddConstraint(
            model_name='workload',
            constraint=models.CheckConstraint(condition=models.Q(('generation_status__in', ['', 'queued', 'running', 'done', 'failed'])), name='workload_generation_valid'),
        ),
    ]
