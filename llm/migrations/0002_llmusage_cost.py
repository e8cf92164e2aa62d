import re
from decimal import Decimal

from django.conf import settings
from django.db import migrations, models
from django.db.models import DecimalField, ExpressionWrapper, F, Value

# Matched as llm.costs.model_price matches, written again here: a migration does not import the
# app's code, which may change after it.
SNAPSHOT = re.compile(r"-(?:\d{4}-\d{2}-\d{2}|\d{8}|\d{4})$")


def price_existing_rows(apps, schema_editor):
    """The rows metered before costs existed, priced with the deployment's table as it is now
    (LLM_PRICES); models it does not price stay at 0. One UPDATE per priced model."""
    prices = getattr(settings, "LLM_PRICES", {})
    rows = apps.get_model("llm", "LLMUsage").objects.using(schema_editor.connection.alias)
    for model in rows.order_by().values_list("model", flat=True).distinct():
        bare = model.strip().rsplit("/", 1)[-1]
        price = next((prices[name] for name in (model, bare, SNAPSHOT.sub("", bare)) if name in prices), None)
        if price is None or not any(price):
            continue
        prompt, completion = (Value(Decimal(p), output_field=DecimalField()) for p in price)
        cost = (F("prompt_tokens") * prompt + F("completion_tokens") * completion) / Value(
            Decimal(1_000_000), output_field=DecimalField()
        )
        rows.filter(model=model).update(
            cost=ExpressionWrapper(cost, output_field=DecimalField(max_digits=14, decimal_places=8))
        )


class Migration(migrations.Migration):
    dependencies = [
        ("llm", "0001_initial"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name="llmusage",
            name="cost",
            field=models.DecimalField(decimal_places=8, default=Decimal("0"), max_digits=14),
        ),
        migrations.AlterField(
            model_name="llmusage",
            name="purpose",
            field=models.CharField(
                choices=[
                    ("chat", "Chat reply"),
                    ("summary", "Conversation summary"),
                    ("compression", "Context compression"),
                    ("grading", "Answer grading"),
                ],
                max_length=16,
            ),
        ),
        # Priced before the new index exists: it is then built once, over the final values.
        migrations.RunPython(price_existing_rows, migrations.RunPython.noop, elidable=True),
        migrations.AddIndex(
            model_name="llmusage",
            index=models.Index(fields=["student", "created_at", "cost"], name="llmusage_student_spend"),
        ),
        migrations.RemoveIndex(model_name="llmusage", name="llmusage_student_created"),
    ]
