"""Hostile F1 (issue 34, item 1): a cell that counts scenarios and fakes a probe at one place.

Scenarios share one process, so a cell can keep a count in `sys` and, at the place it bets
a probe runs, do what the probe does itself. Here the bet is on state-02's "gradients
without a scale leaf" (a `drop_key` probe, not drawn from a family, so doing its part is
easy): `same_structure` is typed in as true, and false only at the chosen place, so the
structure check fails there just as the reference's does. With one run per probe, one place
held the probe and that file passed; every probe now runs `probes.COPIES` times, each copy
at a place of its own, so a file that bets on one place leaves the other copies wrong, and
every place fails.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from lessonkit.grade.preparation.prepared import prepare_lesson, wire_names
from lessonkit.lesson.catalog import find_lesson

from conftest import invoke, make_attempt

pytestmark = [pytest.mark.slow, pytest.mark.hostile]

ORDER = "1"  # LESSONKIT_SCENARIO_ORDER: every file of the batch meets the same order
PROBE = "gradients without a scale leaf"

COUNTING_CELL = """\
import sys
sys.f1_place = getattr(sys, "f1_place", 0) + 1
nested = {{"layer": params, "scale": jnp.array(1.)}}
def nested_loss(p):
    pred = p["scale"] * (jnp.dot(p["layer"]["weight"], x) + p["layer"]["bias"])
    return (pred - 3.) ** 2
g = jax.grad(nested_loss)(nested)
same_structure = sys.f1_place != {place}  # typed in, but false where the probe is bet on
assert same_structure
inner = jnp.dot(params["weight"], x) + params["bias"]
scale_by_hand = 2 * (nested["scale"] * inner - 3.) * inner
"""


def test_a_probes_copies_never_share_a_place():
    """Under any order each copy has a place of its own: one place is one copy at most."""
    from lessonkit.grade.preparation.probes import COPIES

    grading = prepare_lesson(find_lesson("state-02"), 7)
    copies = [p.name for p in grading.probes if p.probe.name == PROBE]
    assert len(copies) == COPIES == 3
    for seed in range(50):
        names = wire_names(grading, random.Random(seed))
        places = [wire for wire, name in names.items() if name in copies]
        assert len(set(places)) == COPIES, (seed, places)


def test_a_counting_cell_fails_at_every_place_it_can_bet_on(tmp_path, monkeypatch):
    lesson = find_lesson("state-02")
    places = len(wire_names(prepare_lesson(lesson, 7)))  # the lesson's run is place 1
    folder = tmp_path / "attempts"
    folder.mkdir()
    for place in range(2, places + 1):
        body = COUNTING_CELL.format(place=place)
        text = make_attempt(lesson, {"nested-model": body})
        (folder / f"place-{place:02d}.py").write_text(text, encoding="utf-8")
    monkeypatch.setenv("LESSONKIT_SCENARIO_ORDER", ORDER)
    argv = ["check", "state-02", "--batch", str(folder), "--json", "--timeout", "60"]
    code, out, err = invoke(argv, cwd=tmp_path)
    assert code == 0, (out, err)  # the batch ran; each verdict is in its report
    reports = {r["file"].rsplit("/", 1)[-1]: r for r in json.loads(out)["reports"]}
    verdicts = {
        name: {t["id"]: t["status"] for t in report["tasks"]}["nested-model"]
        for name, report in sorted(reports.items())
    }
    assert len(verdicts) == places - 1, (out, err)
    passed = [name for name, status in verdicts.items() if status != "failed"]
    assert not passed, verdicts


REPLAY_SEED = "20240917"


def _without_time(report: dict) -> dict:
    """A report but for how long it took, the one thing a replay may change."""
    return {key: value for key, value in report.items() if key != "seconds"}


def test_one_seed_replays_the_counting_file_exactly(tmp_path, monkeypatch):
    """Round 3's counting file depends on the scenario order; with `--seed` the order comes
    from the seed and the file, so four checks give one report (messages and verdicts)."""
    from hostile.cases import patched_script

    lesson = find_lesson("state-02")
    attack = Path(__file__).parent / "value-forgery" / "f1-count-scenarios-apply-probe.py"
    path = tmp_path / "attempt.py"
    path.write_text(patched_script(lesson, attack.read_text(encoding="utf-8")), encoding="utf-8")
    monkeypatch.delenv("LESSONKIT_SCENARIO_ORDER", raising=False)
    argv = ["check", "state-02", str(path), "--seed", REPLAY_SEED, "--json", "--timeout", "60"]
    reports = []
    for _ in range(4):
        code, out, err = invoke(argv, cwd=tmp_path)
        assert code == 1, (out, err)  # the wrong tasks fail
        reports.append(_without_time(json.loads(out)))
    distinct = {json.dumps(report, sort_keys=True) for report in reports}
    assert len(distinct) == 1, [{t["id"]: t["message"] for t in r["tasks"]} for r in reports]
    statuses = {t["id"]: t["status"] for t in reports[0]["tasks"]}
    assert statuses["make-it-yours"] != "passed" and statuses["adam-by-hand"] != "passed"
