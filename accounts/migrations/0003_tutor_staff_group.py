"""The "Tutor staff" group: what a teacher with is_staff may do in the Django admin.

View conversations, messages, memories and LLM usage, and archive memories (the memory admin's
only change, through memory.services.lifecycle.memory_archive_by_staff; it edits no field).
"""

from django.contrib.auth.management import create_permissions
from django.db import migrations

GROUP = "Tutor staff"
PERMISSIONS = [
    ("conversations", "view_conversation"),
    ("conversations", "view_message"),
    ("memory", "view_aimemory"),
    ("memory", "change_aimemory"),
    ("llm", "view_llmusage"),
]


def group_create(apps, schema_editor):
    # Permissions are made by post_migrate, after every migration: on a fresh database they do
    # not exist yet, so they are made here for the three apps (create_permissions skips the
    # ones that exist).
    for label in {label for label, _ in PERMISSIONS}:
        app_config = apps.get_app_config(label)
        app_config.models_module = True
        create_permissions(app_config, verbosity=0, using=schema_editor.connection.alias, apps=apps)
        app_config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    group, _ = Group.objects.using(schema_editor.connection.alias).get_or_create(name=GROUP)
    for label, codename in PERMISSIONS:
        group.permissions.add(
            Permission.objects.using(schema_editor.connection.alias).get(
                content_type__app_label=label, codename=codename
            )
        )


def group_delete(apps, schema_editor):
    apps.get_model("auth", "Group").objects.using(schema_editor.connection.alias).filter(name=GROUP).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0002_staff_role"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
        ("conversations", "0004_summary_owner"),
        ("memory", "0007_fallback_summary"),
        ("llm", "0001_initial"),
    ]

    operations = [migrations.RunPython(group_create, group_delete)]
