"""The four roles as groups, each with the permissions of the ones below it.

viewer reads; reviewer also reviews and edits traces; curator also uploads workloads, imports steps,
adjudicates and exports; admin also manages users. Roles are groups so that a site's admin assigns them
in Django's admin without code.
"""

from django.db import migrations

ROLES = ("viewer", "reviewer", "curator", "admin")


def create_roles(apps, schema_editor):
    group = apps.get_model("auth", "Group")
    for name in ROLES:
        group.objects.get_or_create(name=name)


def drop_roles(apps, schema_editor):
    apps.get_model("auth", "Group").objects.filter(name__in=ROLES).delete()


class Migration(migrations.Migration):
    dependencies = [("curation", "0001_initial"), ("auth", "0012_alter_user_first_name_max_length")]
    operations = [migrations.RunPython(create_roles, drop_roles)]
