"""What an import did: per entity, how many rows were created, updated, deactivated, unchanged
and rejected, and the rejected rows (file, line, sourcedId, reason), at most ERRORS_CAP of them
(the rest counted in `errors_omitted`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

ERRORS_CAP = 1000
OUTCOMES = ("created", "updated", "deactivated", "unchanged", "rejected")
ENTITIES = ("orgs", "users", "classes", "enrollments")


@dataclass
class Report:
    counts: dict[str, dict[str, int]] = field(
        default_factory=lambda: {entity: dict.fromkeys(OUTCOMES, 0) for entity in ENTITIES}
    )
    errors: list[dict[str, Any]] = field(default_factory=list)
    errors_omitted: int = 0
    notes: list[str] = field(default_factory=list)

    def count(self, entity: str, outcome: str, n: int = 1) -> None:
        self.counts[entity][outcome] += n

    def reject(self, entity: str, file: str, line: int, sid: str, reason: str) -> None:
        self.counts[entity]["rejected"] += 1
        if len(self.errors) < ERRORS_CAP:
            self.errors.append({"file": file, "line": line, "sourced_id": sid, "reason": reason})
        else:
            self.errors_omitted += 1

    def as_dict(self) -> dict[str, Any]:
        return {"counts": self.counts, "errors": self.errors, "errors_omitted": self.errors_omitted}

    def lines(self) -> list[str]:
        """The report as text, for the command."""
        out = [*self.notes]
        out.append(f"{'':12}" + "".join(f"{outcome:>12}" for outcome in OUTCOMES))
        for entity in ENTITIES:
            out.append(f"{entity:12}" + "".join(f"{self.counts[entity][o]:>12}" for o in OUTCOMES))
        for error in self.errors:
            out.append(
                f"rejected: {error['file']} line {error['line']} {error['sourced_id'] or '-'}: {error['reason']}"
            )
        if self.errors_omitted:
            out.append(f"... and {self.errors_omitted} more rejected rows (the first {ERRORS_CAP} are listed)")
        return out
