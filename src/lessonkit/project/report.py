"""A project's grade: every property's verdict and evidence, and the runs it rests on."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, get_args

from lessonkit.lesson.project import PROPERTIES, ProjectContract
from lessonkit.lesson.text import markdown_text, safe_name
from lessonkit.project.properties import PropertyResult, Verdict
from lessonkit.project.runs import FinishedRun, RunName, other_seed

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

    @property
    def not_graded(self) -> str | None:
        """None: a project's runs (`run/whole_script.py`) are not retried, and their report
        is always a grade."""
        return None

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

    @classmethod
    def from_json(cls, data: Any) -> ProjectReport:
        """A report from its `to_json` (a resumed batch's journal): the same report, its
        seconds rounded as written. ValueError, KeyError or TypeError when it is not one."""
        if not isinstance(data, dict) or data.get("schema") != SCHEMA:
            raise ValueError("not a project report of this schema")
        results = tuple(_property_result(p) for p in data["properties"])
        runs = tuple(_finished_run(r) for r in data["runs"])
        wording = tuple(
            (r.property, str(p["sentence"]))
            for r, p in zip(results, data["properties"], strict=True)
        )
        return cls(
            phase=str(data["phase"]),
            file=str(data["file"]),
            seed=int(data["seed"]),
            other_seed=int(data["other_seed"]),
            properties=results,
            runs=runs,
            seconds=float(data["seconds"]),
            sandboxed=bool(data["sandboxed"]),
            wording=wording,
        )

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


def _one_of(value: Any, allowed: tuple[str, ...], what: str) -> Any:
    if value not in allowed:
        raise ValueError(f"{what} {str(value)[:80]!r} is not one of {', '.join(allowed)}")
    return value


def _property_result(data: Any) -> PropertyResult:
    return PropertyResult(
        _one_of(data["property"], PROPERTIES, "property"),
        _one_of(data["verdict"], get_args(Verdict), "verdict"),
        str(data["evidence"]),
        tuple(str(p) for p in data["paths"]),
    )


def _finished_run(data: Any) -> FinishedRun:
    problem = data["problem"]
    return FinishedRun(
        _one_of(data["name"], get_args(RunName), "run"),
        str(data["command"]),
        float(data["seconds"]),
        None if problem is None else str(problem),
    )
