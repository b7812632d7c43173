"""A project's grade: every property's verdict and evidence, and the runs it rests on."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from lessonkit.lesson.project import ProjectContract
from lessonkit.lesson.text import markdown_text, safe_name
from lessonkit.project.properties import PropertyResult
from lessonkit.project.runs import FinishedRun, other_seed

SCHEMA = 1


@dataclass(frozen=True)
class ProjectReport:
    """What `lessonkit project` found about one script."""

    phase: str
    file: str
    seed: int
    other_seed: int
    properties: tuple[PropertyResult, ...]
    runs: tuple[FinishedRun, ...]
    seconds: float
    sandboxed: bool
    wording: tuple[tuple[str, str], ...] = ()  # the phase's sentence for each property

    @property
    def passed(self) -> bool:
        """Every property holds."""
        return bool(self.properties) and all(p.holds for p in self.properties)

    def sentence(self, result: PropertyResult) -> str:
        return dict(self.wording).get(result.property, result.property)

    def to_json(self) -> dict[str, Any]:
        """The report as JSON, keys in a stable order (`schema` first)."""
        return {
            "schema": SCHEMA,
            "phase": self.phase,
            "file": self.file,
            "passed": self.passed,
            "seed": self.seed,
            "other_seed": self.other_seed,
            "sandboxed": self.sandboxed,
            "properties": [
                {**asdict(p), "paths": list(p.paths), "sentence": self.sentence(p)}
                for p in self.properties
            ],
            "runs": [asdict(r) for r in self.runs],
            "seconds": round(self.seconds, 2),
        }

    def feedback_markdown(self) -> str:
        """The report as a Markdown page, for a batch's feedback folder.

        The file name and the evidence (which quotes the script's error output) go through
        `markdown_text`, so neither can forge a heading, a verdict or a link."""
        lines = [f"# Phase {self.phase} project: {markdown_text(safe_name(self.file))}", ""]
        verdict = "every property holds" if self.passed else "not every property holds"
        lines += [f"Result: {verdict} (seeds {self.seed} and {self.other_seed}).", ""]
        for result in self.properties:
            lines += [f"- **{result.property}** ({result.verdict}): {self.sentence(result)}"]
            lines += [f"  - {markdown_text(line)}" for line in result.evidence.splitlines()]
        return "\n".join(lines) + "\n"


def failed_to_read(
    phase: str, file: str, contract: ProjectContract, message: str, seed: int = 0
) -> ProjectReport:
    """A report for a file that could not be read at all: no property holds."""
    results = tuple(PropertyResult(name, "not checked", message) for name, _ in contract.properties)
    return ProjectReport(
        phase, file, seed, other_seed(seed), results, (), 0.0, False, contract.properties
    )
