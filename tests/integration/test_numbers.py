"""Every number the prose states is declared in lesson.md and agrees with the executed code."""

from __future__ import annotations

import pytest

from lessonkit.lesson.load import parse_lesson
from lessonkit.lesson.numbers import prose_numbers, prose_problems
from lessonkit.receipts.numbers import number_problems

from conftest import copy_lesson_repo, invoke

REQUIRED = {
    "prediction": 1.0,
    "residual": -2.0,
    "prediction_derivative": -4.0,
    "weight_gradient": [-8.0, -4.0],
    "bias_gradient": -4.0,
    "updated_weight": [1.4, -0.8],
    "updated_bias": 0.2,
    "new_prediction": 2.2,
    "new_residual": -0.8,
    "loss_before": 4.0,
    "loss_after": 0.64,
    "squared_norm": 96.0,
    "scale_derivative": -4.0,
    "leaf_count": 2,
    "parameter_values": 3,
}


@pytest.fixture(scope="module")
def namespace(lesson):
    scope: dict = {}
    for step in lesson.steps:
        exec(compile(step.code, f"step {step.number}", "exec"), scope)
    return scope


def test_required_numbers_are_declared(lesson):
    declared = {n.name: n.values for n in lesson.numbers}
    for name, value in REQUIRED.items():
        assert declared.get(name) == tuple(value if isinstance(value, list) else [value]), name


def test_prose_declarations_and_code_agree(repo_lesson):
    assert repo_lesson.numbers
    assert number_problems(repo_lesson) == ()


def test_every_declared_number_is_tied_to_the_prose_that_states_it(repo_lesson):
    for number in repo_lesson.numbers:
        assert number.stated, number.name


def test_a_declared_number_names_the_lines_that_state_it(lesson):
    source = lesson.source.splitlines()
    learning_rate = next(n for n in lesson.numbers if n.name == "learning_rate")
    assert learning_rate.stated and all("0.05" in source[i - 1] for i in learning_rate.stated)


def test_a_value_two_numbers_share_is_blamed_on_the_line_that_says_each(lesson):
    """The weight [1.4, -0.8] and the residual -0.8: the residual's line is the one that
    says "the residual", not the weight's (it was blamed on both)."""
    by_name = {n.name: n for n in lesson.numbers}
    source = lesson.source
    weights = _line_of(source, "the weights become $[1.4,-0.8]$")
    residual = _line_of(source, "the residual $-0.8$")
    assert weights != residual
    assert residual in by_name["new_residual"].stated
    assert weights not in by_name["new_residual"].stated
    assert weights in by_name["updated_weight"].stated


def _line_of(text: str, words: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if words in line)


def _declared_line(text: str, name: str) -> int:
    return _line_of(text, f"{name}: {{value:")


def test_a_number_changed_in_one_sentence_fails_verify(tmp_path):
    folder = copy_lesson_repo(tmp_path)
    lesson_md = folder / "lesson.md"
    text = lesson_md.read_text(encoding="utf-8")
    assert text.count("$0.05$") == 2  # the other sentence keeps the declared value
    edited = text.replace("With learning rate $0.05$", "With learning rate $0.1$")
    lesson_md.write_text(edited, encoding="utf-8")
    code, out, _ = invoke(["verify", "state-02"], root=tmp_path)
    assert code == 1
    line = _line_of(edited, "With learning rate $0.1$")
    assert f"lesson.md:{line}: the prose states 0.1, which no declared number gives; " in out
    assert "learning_rate is declared 0.05" in out


def test_a_code_change_is_named_at_the_declaration_by_build_and_verify(tmp_path):
    folder = copy_lesson_repo(tmp_path)
    lesson_md, main = folder / "lesson.md", folder / "code" / "main.py"
    text = lesson_md.read_text(encoding="utf-8")
    code_line = "updated = jax.tree.map(lambda p, g: p - 0.05 * g, params, grads)"
    assert text.count(code_line) == 1
    lesson_md.write_text(text.replace(code_line, code_line.replace("0.05", "0.1")), "utf-8")
    message = (
        f"lesson.md:{_declared_line(text, 'learning_rate')}: learning_rate is declared 0.05 "
        "but the code gives 0.1"
    )
    before = main.read_bytes()
    code, _, err = invoke(["build", "state-02"], root=tmp_path)
    assert code == 2 and message in err and "main.py:" not in err
    assert main.read_bytes() == before, "build stops before writing anything"
    code, out, _ = invoke(["verify", "state-02"], root=tmp_path)
    assert code == 1 and message in out
    advice = [line for line in out.splitlines() if "--record" in line]
    assert advice and all("fix the lesson.md numbers above first" in line for line in advice)
    code, _, err = invoke(["run", "state-02", "--record"], root=tmp_path)
    assert code == 2 and "out of date with lesson.md" in err and "lessonkit build" in err


def test_a_wrong_diagram_stops_build_and_verify(tmp_path):
    """Issue 32: a wrong `{diagram}` (`bias: float32[7]`, "99 numerical parameter values")
    passed build, verify and the describe tests."""
    folder = copy_lesson_repo(tmp_path)
    lesson_md = folder / "lesson.md"
    text = lesson_md.read_text(encoding="utf-8")
    right = "└── bias: float32[]\n2 leaves, 3 numerical parameter values\n"
    assert text.count(right) == 1
    lesson_md.write_text(
        text.replace(right, "└── bias: float32[7]\n2 leaves, 99 numerical parameter values\n"),
        "utf-8",
    )
    line = text.splitlines().index("```{diagram}") + 1
    message = (
        f"lesson.md:{line}: the {{diagram}} of `params` is not what the code gives; "
        "lessonkit.trees.describe(params) draws:\nparams\n├── weight: float32[2]\n"
        "└── bias: float32[]\n2 leaves, 3 numerical parameter values"
    )
    code, _, err = invoke(["build", "state-02"], root=tmp_path)
    assert code == 2 and message in err, err
    code, out, _ = invoke(["verify", "state-02"], root=tmp_path)
    assert code == 1 and message in out, out


def test_every_stale_record_is_named_in_one_message_with_one_command(tmp_path):
    """Issue 32: after an optional experiment's code changed, build named only
    `--script going-further`, and verify then failed again on the notebook's outputs."""
    folder = copy_lesson_repo(tmp_path)
    lesson_md = folder / "lesson.md"
    text = lesson_md.read_text(encoding="utf-8")
    line = "optimizer = optax.adam(0.1)\n"
    assert text.count(line) == 1
    lesson_md.write_text(text.replace(line, "optimizer = optax.adam(learning_rate=0.1)\n"), "utf-8")
    code, out, err = invoke(["build", "state-02"], root=tmp_path)
    assert code == 0, err  # the step between two builds that docs/authoring.md gives
    assert "2 records are not current" in out and "going-further.json" in out, out
    assert "notebook-outputs.json: no current output for cell" in out, out
    assert "next: run `lessonkit run state-02 --script all --record` (it records them all)" in out
    code, out, _ = invoke(["verify", "state-02"], root=tmp_path)
    advice = [line for line in out.splitlines() if "--record" in line]
    assert code == 1 and len(advice) == 1 and "--script all --record" in advice[0], out


def test_build_record_brings_a_lesson_up_to_date_in_one_command(tmp_path):
    from lessonkit.receipts import load_records
    from lessonkit.receipts.cells import stale_cells

    folder = copy_lesson_repo(tmp_path)
    lesson_md = folder / "lesson.md"
    text = lesson_md.read_text(encoding="utf-8")
    line = "optimizer = optax.adam(0.1)\n"
    lesson_md.write_text(text.replace(line, "optimizer = optax.adam(learning_rate=0.1)\n"), "utf-8")
    code, out, err = invoke(["build", "state-02", "--record"], root=tmp_path)
    assert code == 0, out + err
    assert "lessonkit run state-02 --script all --record" in out
    lesson = parse_lesson(lesson_md.read_text(encoding="utf-8"), lesson_md)
    assert load_records(lesson) and stale_cells(lesson) == []


def test_a_run_that_contradicts_the_declared_output_is_never_recorded(tmp_path):
    """Issue 32: with `optax.adam(0.2)` in the optional experiment, `run --record` accepted a
    run that printed `[1.2, -0.8] 0.2` and `False` where the page says `[1.1, -0.9] 0.1`."""
    folder = copy_lesson_repo(tmp_path)
    lesson_md, record = folder / "lesson.md", folder / "outputs" / "going-further.json"
    text = lesson_md.read_text(encoding="utf-8")
    assert text.count("optimizer = optax.adam(0.1)\n") == 1
    lesson_md.write_text(
        text.replace("optimizer = optax.adam(0.1)\n", "optimizer = optax.adam(0.2)\n"), "utf-8"
    )
    before = record.read_bytes()
    invoke(["build", "state-02"], root=tmp_path)  # stops on the stale records, files written
    code, out, _ = invoke(["run", "state-02", "--script", "going-further", "--record"], tmp_path)
    declared = text.splitlines().index("  - 'After one Adam step: [1.1, -0.9] 0.1'")
    experiment = max(
        n for n, line in enumerate(text.splitlines()[:declared], 1) if line.startswith("```{")
    )
    assert code == 1, out
    assert (
        f"lesson.md:{experiment}: code/going_further.py does not print the declared output "
        "`After one Adam step: [1.1, -0.9] 0.1`" in out
    ), out
    assert "`Matches the hand update: True`" in out
    assert record.read_bytes() == before, "a contradicted run is never the reference"


def _adam_at(rate: str, text: str) -> str:
    """state-02 with the optional Adam experiment's code and `:output:` at another rate."""
    after = {"0.2": "[1.2, -0.8] 0.2"}[rate]
    text = text.replace("optimizer = optax.adam(0.1)\n", f"optimizer = optax.adam({rate})\n")
    by_hand = "by_hand = jax.tree.map(lambda p, g: p - 0.1 * g"  # the experiment's, not the task's
    text = text.replace(by_hand, by_hand.replace("0.1", rate), 1)
    declared = "  - 'After one Adam step: [1.1, -0.9] 0.1'"  # an `output:` of the experiment
    return text.replace(declared, f"  - 'After one Adam step: {after}'")


def test_prose_and_expected_numbers_the_run_does_not_print_are_named():
    """Issue 32: the prose said "(1,-1,0) becomes (1.1,-0.9,0.1)" beside a run printing
    `[1.2, -0.8] 0.2`; an `:expected:` line may no more state a number nothing bears out."""
    from lessonkit.lesson.files import GOING_FURTHER
    from lessonkit.receipts.lesson_runs import output_contradictions
    from lessonkit.receipts.store import load_record

    from conftest import LESSON_MD

    text = LESSON_MD.read_text(encoding="utf-8")
    recorded = load_record(parse_lesson(text, LESSON_MD), GOING_FURTHER).stdout
    assert output_contradictions(parse_lesson(text, LESSON_MD), GOING_FURTHER, recorded) == ()
    stdout = recorded.replace("[1.1, -0.9] 0.1", "[1.2, -0.8] 0.2")
    expected = "one step moves each parameter by 0.1 against"
    edited = _adam_at("0.2", text).replace(expected, expected.replace("0.1", "0.3"))
    lines = edited.splitlines()
    prose = 1 + next(n for n, line in enumerate(lines) if "becomes $(1.1,-0.9,0.1)$" in line)
    expected_at = 1 + next(n for n, line in enumerate(lines) if "by 0.3 against" in line)
    problems = output_contradictions(parse_lesson(edited, LESSON_MD), GOING_FURTHER, stdout)
    named = sorted((int(p.where.rsplit(":", 1)[1]), p.message.split(",")[0]) for p in problems)
    assert named == [
        (expected_at, "the text states 0.3"),
        (prose, "the text states -0.9"),
        (prose, "the text states 1.1"),
    ], problems


def test_a_run_that_contradicts_the_prose_is_never_recorded(tmp_path):
    """The documented cycle with the code and `:output:` moved to 0.2 but not the prose:
    `run --record` refuses, naming the sentence, and keeps the old record."""
    folder = copy_lesson_repo(tmp_path)
    lesson_md, record = folder / "lesson.md", folder / "outputs" / "going-further.json"
    text = _adam_at("0.2", lesson_md.read_text(encoding="utf-8"))
    lesson_md.write_text(text, "utf-8")
    before = record.read_bytes()
    invoke(["build", "state-02"], root=tmp_path)
    code, out, _ = invoke(["run", "state-02", "--script", "going-further", "--record"], tmp_path)
    prose = 1 + next(n for n, line in enumerate(text.splitlines()) if "becomes $(1.1" in line)
    assert code == 1, out
    assert f"lesson.md:{prose}: the text states 1.1, which the run of" in out, out
    assert "does not print the declared output" not in out, out
    assert record.read_bytes() == before


def test_prose_numbers_skip_code_links_and_identifiers():
    text = (
        "Weights $w=[1,-1]$, so $(1-3)^2$ is `x = 42` and float32[2] at "
        "[docs](https://x.org/v2), version 3.14.3,\nthen -0.8 and 2.5e-3."
    )
    found = [(p.text, p.line) for p in prose_numbers(text, 10)]
    assert found == [
        ("1", 10),
        ("-1", 10),
        ("1", 10),
        ("3", 10),
        ("2", 10),
        ("-0.8", 11),
        ("2.5e-3", 11),
    ]


def _derivation_with(extra: str, option: str = "") -> str:
    from conftest import LESSON_MD

    text = LESSON_MD.read_text(encoding="utf-8")
    text = text.replace("Work through one case by hand.", f"{extra} Work through one case by hand.")
    return text.replace("```{numbers}\n", f"```{{numbers}}\n{option}", 1)


def test_a_count_is_flagged_until_marked_not_a_result():
    from conftest import LESSON_MD

    flagged = parse_lesson(_derivation_with("It takes 7 minutes."), LESSON_MD)
    (problem,) = prose_problems(flagged)
    assert "the prose states 7, which no declared number gives" in problem.message
    marked = parse_lesson(_derivation_with("It takes 7 minutes.", ":not_results: 7\n"), LESSON_MD)
    assert prose_problems(marked) == ()


def test_a_declared_number_nothing_states_is_named():
    from conftest import LESSON_MD

    text = _derivation_with("").replace(
        "target: {value: 3.0", 'unused: {value: 12.5, expr: "12.5"}\ntarget: {value: 3.0'
    )
    (problem,) = prose_problems(parse_lesson(text, LESSON_MD))
    assert "unused is declared 12.5, but nothing in the sections it covers" in problem.message


def test_tree_diagram_matches_describe(lesson, namespace):
    from lessonkit.lesson.model import Diagram
    from lessonkit.trees import describe

    (diagram,) = lesson.items(Diagram)
    assert describe(namespace[diagram.tree], name=diagram.tree) == diagram.text
