"""The loader: the lesson parses into the expected model, and every mistake names file:line."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from lessonkit.errors import LessonError
from lessonkit.lesson.load import parse_lesson
from lessonkit.lesson.model import STAGES
from lessonkit.lesson.phase_file import load_phase, phase_file_of

from conftest import LESSON_MD, SPEC_OUTLINE, copy_phase_file

SOURCE = LESSON_MD.read_text(encoding="utf-8")
PHASE = load_phase(phase_file_of(LESSON_MD))


def test_metadata(lesson):
    meta = lesson.meta
    assert (meta.id, meta.title) == ("state-02", "Pytrees and structured parameters")
    assert (meta.phase.number, meta.phase.title) == ("03", "State, randomness & control flow")
    assert (meta.lesson_number, len(meta.phase.lessons), meta.minutes) == (2, 4, 60)
    assert (meta.revision, str(meta.date), meta.hardware) == ("v0.7.0", "2026-10-20", "CPU")
    assert meta.phase.lessons[meta.lesson_number - 2] == "state-01"


def test_stages_in_order(lesson):
    assert [p.title for p in lesson.parts if p.stage] == list(STAGES)
    assert [p.stage for p in lesson.parts if p.stage] == [1, 2, 3, 4, 5]


def test_section_order_follows_the_spec(lesson):
    titles = [s.title for s in lesson.sections]
    positions = [titles.index(t) for t in SPEC_OUTLINE]
    assert positions == sorted(positions)


def test_steps_tasks_and_quiz(lesson):
    assert [(s.number, s.title) for s in lesson.steps] == [
        (1, "Prepare the inputs"),
        (2, "Build the computation"),
        (3, "Run and check the result"),
    ]
    assert [s.uses[0].signature for s in lesson.steps[1:]] == [
        "jnp.array(values, dtype=...)",
        "jax.value_and_grad(loss_fn)(params, ...)",
    ]
    assert [(t.id, t.kind, t.title) for t in lesson.tasks] == [
        ("make-it-yours", "exercise", "Make it yours"),
        ("nested-model", "practice", "Extend to a nested model"),
        ("repair", "challenge", "Repair a mismatched update tree"),
        ("adam-by-hand", "optional", "Adam's first step by hand"),
    ]
    quiz = lesson.quizzes[0]
    assert len(quiz.options) == 3 and 0 <= quiz.answer < 3


def test_scaffolds_give_no_answer_away(lesson):
    for task in lesson.tasks:
        assert "todo(" in task.scaffold
        assert (
            "96" not in task.scaffold and "-4" not in task.scaffold and "0.64" not in task.scaffold
        )
        # the published scaffold's `assert jax.tree.structure(g)` is always true
        assert not re.search(r"assert jax\.tree\.structure\([^)]*\)\s*(#|$)", task.scaffold, re.M)


def _error(text: str) -> str:
    with pytest.raises(LessonError) as info:
        parse_lesson(text, Path("lesson.md"), PHASE)
    return str(info.value)


def _line_of(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n") + 1


@pytest.mark.parametrize(
    ("old", "new", "anchor", "message"),
    [
        ("```{math}", "```{maths}", "```{maths}", r"unknown block role \{maths\}; choose one of"),
        (
            "````{solution} make-it-yours\n",
            "````{notes}\n",
            "````{notes}",
            r"unknown block role \{notes\}",
        ),
        (
            "answer: 0",
            "answer: 3",
            "```{quiz} quiz-gradient-tree",
            r"quiz answer 3 is out of range: .* 0 to 2",
        ),
        (
            "\nkind: exercise\n",
            "\nkind: homework\n",
            "```{task} make-it-yours",
            r"':kind:' must be one of",
        ),
        (
            ":shell: bash\npython3 -m venv",
            ":shell: zsh\npython3 -m venv",
            "```{setup}",
            "bash or powershell",
        ),
        (":prompt: Predict", ":promt: Predict", ":promt:", r"unknown option ':promt:'"),
        (
            ":uses: jnp.array(values, dtype=...) |",
            ":uses: jnp.array(values, dtype=...) -",
            ":uses: jnp.array(values, dtype=...) -",
            r"'signature \| meaning'",
        ),
        (
            "# Evidence\n",
            "# Evidence stage\n",
            "# Evidence stage",
            r"unknown part heading 'Evidence stage'",
        ),
        (
            'phase: "03"\n',
            'phase: "04"\n',
            'phase: "04"',
            r"'phase' is '04', but this lesson's folder is in phase 03",
        ),
        (
            "id: state-02\n",
            "id: state-22\n",
            "id: state-22",
            r"lesson 'state-22' is not in the lessons of its phase",
        ),
        (
            'phase: "03"\n',
            'phase: "03"\nprevious: Random keys without surprises\n',
            'phase: "03"',
            r"lesson_number, lesson_count and previous now live in the phase's phase.yaml",
        ),
        (
            'phase: "03"\n',
            "phase: 3\n",
            "phase: 3",
            r"bad front matter: 'phase' should be a str",
        ),
        ("minutes: 60\n", "", "---", r"bad front matter: missing 'minutes'"),
        (
            "hardware: CPU\n",
            "hardware: [CPU\n",
            "hardware: [CPU",
            r"bad front matter: not valid YAML",
        ),
        (
            "  section: round-trip\n",
            "  section: round-trips\n",
            "- title: Flatten/unflatten round trip",
            r"\{evidence\} block: item 'Flatten/unflatten round trip': 'section' names no section",
        ),
        (
            "  task: repair\n  keep: The error",
            "  task: repairs\n  keep: The error",
            "- title: Missing-key repair",
            r"'task' names no task of this lesson: 'repairs'",
        ),
        (
            "      number: loss_after\n",
            "      number: loss_later\n",
            "- title: Missing-key repair",
            r"'number' names no entry of the \{numbers\} block: 'loss_later'",
        ),
        (
            "    - round_trip: params\n",
            "    - round_trip: params\n      number: leaf_count\n",
            "- title: Flatten/unflatten round trip",
            r"'number' goes with 'value' only",
        ),
        (
            "    - tree: g\n",
            "    - graph: g\n",
            "- title: Nested-scale derivative",
            r"a 'show' entry needs exactly one of tree, value, numbers, round_trip",
        ),
        (
            "  section: containers\n",
            "  section: containers\n  colour: blue\n",
            "- title: Parameter and gradient tree diagram",
            r"unknown key 'colour'",
        ),
        (
            "  prompt: >-\n    Before printing them",
            "  hint: >-\n    Before printing them",
            "- title: Parameter and gradient tree diagram",
            r"unknown key 'hint'",
        ),
        (
            'norm_squared = todo("norm_squared: add up the squares of every gradient leaf")\n',
            'norm_squared = 1.0 + todo("norm_squared: the squares of every gradient leaf")\n',
            'norm_squared = 1.0 + todo("norm_squared',
            r"todo\(\.\.\.\) outside a function must be the whole value of an assignment",
        ),
        (
            "weight: {uniform: [-2, 2], shape: [2]}\n",
            "weight: {uniform: [2, -2], shape: [2]}\n",
            "    weight: {",
            r"input 'params/weight': 'uniform' must be \[low, high\] with low < high",
        ),
        (
            "weight: {uniform: [-2, 2], shape: [2]}\n",
            "weight: {uniform: [-2, 2], shape: [0]}\n",
            "    weight: {",
            r"'shape' must be a list of positive integers",
        ),
        (
            "weight: {uniform: [-2, 2], shape: [2]}\n",
            "weight: {uniform: [-2, 2], shape: [100]}\n",
            "    weight: {",
            r"at most 64 values per leaf",
        ),
        (
            "weight: {uniform: [-2, 2], shape: [2]}\n",
            "weight: {uniform: [-2, 2], decimals: 9}\n",
            "    weight: {",
            r"'decimals' must be 0 to 6",
        ),
        (
            "weight: {uniform: [-2, 2], shape: [2]}\n",
            "weight: {integers: [0.5, 3]}\n",
            "    weight: {",
            r"input 'params/weight': 'integers' must be \[low, high\] with low < high",
        ),
        (
            "weight: {uniform: [-2, 2], shape: [2]}\n",
            "weight: {integers: [0, 3], decimals: 1}\n",
            "    weight: {",
            r"unknown key 'decimals' for 'integers'; allowed: edges, integers, shape",
        ),
        (
            "weight: {uniform: [-2, 2], shape: [2]}\n",
            "weight: {integers: [0, 5000000000]}\n",
            "    weight: {",
            r"'integers' bounds must fit int32",
        ),
        (
            "weight: {uniform: [-2, 2], shape: [2]}\n",
            "weight: {bernoulli: 1.5}\n",
            "    weight: {",
            r"'bernoulli' must be the probability of True, between 0 and 1",
        ),
        (
            "weight: {uniform: [-2, 2], shape: [2]}\n",
            "weight: {bernoulli: 0.5, integers: [0, 3]}\n",
            "    weight: {",
            r"one generator per input, got integers and bernoulli",
        ),
        (
            "weight: {uniform: [-2, 2], shape: [2]}\n",
            "weight: {shape: [2], integer: [0, 3]}\n",
            "    weight: {",
            r"'shape' without a generator; choose one of \{uniform: \.\.\.\}, \{integers",
        ),
        (
            "weight: {uniform: [-2, 2], shape: [2]}\n",
            "weight: 3\n",
            "    weight: 3",
            r"input 'params/weight' must be a mapping: names, or one of",
        ),
        (
            "    vary: updated\n",
            "    vary: fixed\n",
            "  - name: another result in updated",
            r"probe 'another result in updated' varies 'fixed', which no step assigns",
        ),
        (
            "    transform: replace\n    value: {weight: [0.0, 0.0], bias: 0.0}\n"
            "    messages_when: read\n",
            "    transform: drop_key\n    key: bias\n",
            "  - name: another result in updated",
            r"probe 'another result in updated' changes 'updated' where the cell of 'repair' "
            r"binds it, and the task's solution binds no such name",
        ),
        (
            "    vary: optax.GradientTransformation.update\n    transform: shift_key\n",
            "    vary: optax.GradientTransformation.update\n    transform: replace\n",
            "  - name: optax's step moved",
            r"'replace' gives a value to a name a step assigns, not to "
            r"'optax.GradientTransformation.update'",
        ),
        (
            "    where_bound: g\n    transform: drop_key\n",
            "    where_bound: h\n    transform: drop_key\n",
            "  - name: gradients without a scale leaf",
            r"probe 'gradients without a scale leaf' changes 'h' where the cell of 'nested-model' "
            r"binds it, and the task's solution binds no such name",
        ),
        (
            "    vary: gradients\n    transform: shift_key\n    key: layer\n",
            "    vary: gradients\n    where_bound: g\n    transform: shift_key\n    key: layer\n",
            "  - name: moved layer gradients",
            r"probe 'moved layer gradients': where_bound names a name the task's cell binds, .* "
            r"it goes with 'vary: gradients' and add_leaf, drop_key, rename_key",
        ),
        (
            "    messages_when: read\n    messages:\n      fixed:",
            "    messages_when: sometimes\n    messages:\n      fixed:",
            "  - name: another result in updated",
            r"probe 'another result in updated': messages_when must be one of always, read, "
            r"not read, got 'sometimes'",
        ),
        (
            "    key: layer\n    value: 1.0\n    messages:\n",
            "    key: layer\n    value: 1.0\n    messages_when: read\n    messages:\n",
            "  - name: moved layer gradients",
            r"probe 'moved layer gradients': messages_when says whether the cell reads the name "
            r"the probe varies, and 'gradients' is no input or step name a cell reads",
        ),
        (
            "(derivation)=",
            "(problem)=",
            "## Derive the matching gradient tree",
            r"section id 'problem' is used twice",
        ),
    ],
)
def test_mistakes_name_file_and_line(old, new, anchor, message):
    assert old in SOURCE
    broken = SOURCE.replace(old, new, 1)
    text = _error(broken)
    assert re.search(message, text), text
    line = _line_of(broken, anchor)
    assert text.startswith(f"lesson.md:{line}:"), (text, line)


def test_task_without_solution():
    start = SOURCE.index("````{solution} make-it-yours\n")
    end = SOURCE.index("\n````\n", start + 4) + 6
    broken = SOURCE[:start] + SOURCE[end:]
    text = _error(broken)
    line = _line_of(broken, "```{task} make-it-yours")
    assert text.startswith(f"lesson.md:{line}:")
    assert "task 'make-it-yours' has no {solution} block" in text


def test_task_part_without_task():
    broken = SOURCE.replace("## The problem\n", "## The problem\n\n```{hint}\nA hint.\n```\n", 1)
    text = _error(broken)
    assert "must follow a {task} block" in text
    assert text.startswith(f"lesson.md:{_line_of(broken, '```{hint}')}:")


def test_missing_front_matter():
    assert _error(SOURCE.split("---\n", 2)[2]).startswith("lesson.md:1: bad front matter")


def test_bad_yaml_in_quiz_names_the_line():
    broken = SOURCE.replace("answer: 0", "answer: [0", 1)
    text = _error(broken)
    assert "body is not valid YAML" in text
    quiz_line = _line_of(broken, "```{quiz} quiz-gradient-tree")
    reported = int(text.split(":")[1])
    assert quiz_line < reported <= quiz_line + 10


def test_cli_reports_errors_without_traceback(tmp_path, capsys):
    from lessonkit.cli import main

    root = tmp_path / "repo"
    lesson_dir = root / "phases" / "03-state" / "02-pytrees-and-structured-parameters"
    lesson_dir.mkdir(parents=True)
    (root / "pyproject.toml").write_text("")
    (lesson_dir / "lesson.md").write_text(
        SOURCE.replace("answer: 0", "answer: 7"), encoding="utf-8"
    )
    copy_phase_file(LESSON_MD.parent, lesson_dir)
    import os

    os.environ["LESSONKIT_ROOT"] = str(root)
    try:
        status = main(["verify"])
    finally:
        del os.environ["LESSONKIT_ROOT"]
    err = capsys.readouterr().err
    assert status == 2
    assert "lesson.md:" in err and "quiz answer 7 is out of range" in err
    assert "Traceback" not in err


def _required_constants(solution: str) -> set[float]:
    """Float literals the reference solution computes with (its assertions' numbers excluded)."""
    import ast

    found: set[float] = set()
    for statement in ast.parse(solution).body:
        if isinstance(statement, ast.Assert):
            continue
        for node in ast.walk(statement):
            if isinstance(node, ast.Constant) and isinstance(node.value, float):
                found.add(node.value)
    return found


def test_tasks_state_every_value_they_are_graded_on(lesson):
    """The grader compares with the reference, so a starting value it uses must be in the task."""
    for task in lesson.tasks:
        text = " ".join([task.prompt, task.where, *task.plan])
        stated = {float(n) for n in re.findall(r"(?<![\w.])-?\d+(?:\.\d+)?(?:e-?\d+)?", text)}
        missing = sorted(_required_constants(task.solution) - stated)
        assert missing == [], f"task {task.id} never states {missing}"


def test_every_where_line_names_the_practice_copy_and_the_check_that_grades_it(any_lesson):
    lesson = any_lesson
    for task in lesson.tasks:
        assert "practice copy" in task.where, task.where
        assert f"`lessonkit check {lesson.meta.id}`" in task.where, task.where
        assert "exercise file" not in task.where and "exercises/" not in task.where


def test_declared_attempts_are_read_with_their_lines(any_lesson):
    lesson = any_lesson
    attempts = lesson.grading.attempts
    assert {a.task for a in attempts} == {t.id for t in lesson.tasks}
    for task in lesson.tasks:
        verdicts = {a.expect for a in attempts if a.task == task.id}
        assert "passed" in verdicts and verdicts - {"passed"}, task.id
    lines = lesson.source.splitlines()
    for a in attempts:  # an {attempt} block, or an entry of the older YAML list
        assert re.search(rf"(\{{attempt\}} |name: ){re.escape(a.name)}$", lines[a.line - 1])


def test_a_declared_attempt_with_the_wrong_verdict_fails_verify(lesson, tmp_path, monkeypatch):
    """An attempt that is declared wrong but passes is named at its lesson.md line."""
    from dataclasses import replace

    from lessonkit.grade.self_checks.attempts import prove_attempts
    from lessonkit.lesson.model import DeclaredAttempt
    from lessonkit.settings import proving_settings

    task = lesson.task("make-it-yours")
    right = DeclaredAttempt("make-it-yours", "claimed wrong", task.solution, "failed", "", 7)
    grading = replace(lesson.grading, attempts=(right,))
    parts = tuple(
        replace(
            part,
            sections=tuple(
                replace(s, items=tuple(grading if i is lesson.grading else i for i in s.items))
                for s in part.sections
            ),
        )
        for part in lesson.parts
    )
    settings = proving_settings(os.environ, jobs=1)
    (problem,) = prove_attempts(replace(lesson, parts=parts), jobs=1, settings=settings)
    assert problem.startswith(f"{lesson.path}:7: the declared attempt 'claimed wrong'")
    assert "must be failed, but it got passed" in problem


# `edges:` and `accept:` in the {grading} block (issue 19, items 3 and 8): each mistake is
# named at its lesson.md line, like the other generator mistakes above.
WEIGHT = "weight: {uniform: [-2, 2], shape: [2]}\n"
ACCEPT = "  repair: {mappings: any, floats: [float32, float64]}\n"  # state-02 declares it


@pytest.mark.parametrize(
    ("old", "new", "anchor", "message"),
    [
        (
            WEIGHT,
            "weight: {uniform: [-2, 2], shape: [2], edges: [[-9.0, 1.0, 2.0]]}\n",
            "    weight: {",
            r"input 'params/weight': edge 1 must be shape \[2\] of numbers in float32's range, "
            r"like the generator",
        ),
        (
            WEIGHT,
            "weight: {uniform: [-2, 2], shape: [2], edges: [[-9.0, 1.0], -9.0]}\n",
            "    weight: {",
            r"edge 2 must be shape \[2\] of numbers",
        ),
        (
            WEIGHT,
            "weight: {uniform: [-2, 2], shape: [2], edges: [[-9.0, '1.0']]}\n",
            "    weight: {",
            r"edge 1 must be shape \[2\] of numbers",
        ),
        (
            WEIGHT,
            "weight: {uniform: [-2, 2], edges: [1.0e39]}\n",
            "    weight: {",
            r"edge 1 must be a single value of numbers in float32's range",
        ),
        (
            WEIGHT,
            "weight: {integers: [0, 3], shape: [2], edges: [[1.5, 2.0]]}\n",
            "    weight: {",
            r"input 'params/weight': edge 1 must be shape \[2\] of integers that fit int32",
        ),
        (
            WEIGHT,
            "weight: {integers: [0, 3], edges: [5000000000]}\n",
            "    weight: {",
            r"edge 1 must be a single value of integers that fit int32",
        ),
        (
            WEIGHT,
            "weight: {bernoulli: 0.5, edges: [1]}\n",
            "    weight: {",
            r"edge 1 must be a single value of true or false",
        ),
        (
            WEIGHT,
            "weight: {uniform: [-2, 2], edges: -9.0}\n",
            "    weight: {",
            r"input 'params/weight': 'edges' must be a list of values",
        ),
        (
            WEIGHT,
            "weight: {uniform: [-2, 2], edges: [1, 2, 3, 4, 5, 6, 7, 8, 9]}\n",
            "    weight: {",
            r"at most 8 'edges' values in all, each is one more input set",
        ),
        (
            ACCEPT,
            ACCEPT.replace("mappings: any", "mappings: some"),
            "  repair: {",
            r"accept 'repair': 'mappings' must be any or exact, got 'some'",
        ),
        (
            ACCEPT,
            ACCEPT.replace("float32, float64", "float32, float65"),
            "  repair: {",
            r"accept 'repair': 'floats' must list two or more of float16, bfloat16, float32",
        ),
        (
            ACCEPT,
            ACCEPT.replace("mappings: any", "lists: any"),
            "  repair: {",
            r"accept 'repair': unknown key 'lists'; allowed: floats, mappings",
        ),
        (
            ACCEPT,
            ACCEPT.replace("  repair:", "  repairs:"),
            "  repairs: {",
            r"\{grading\} block: 'accept' names no task of this lesson: 'repairs'",
        ),
        (
            "accept:\n" + ACCEPT + "  adam-by-hand: {floats: [float32, float64]}\n",
            "accept: [repair]\n",
            "accept: [",
            r"'accept' must map task ids to \{mappings: \.\.\., floats: \[\.\.\.\]\}",
        ),
    ],
)
def test_edge_and_accept_mistakes_name_file_and_line(old, new, anchor, message):
    test_mistakes_name_file_and_line(old, new, anchor, message)


def test_edges_and_accept_are_read_into_the_model():
    from lessonkit.grade.preparation.rubric import rubric_for
    from lessonkit.lesson.rules.accept import ACCEPT, Accept

    source = SOURCE.replace(
        WEIGHT, "weight: {uniform: [-2, 2], shape: [2], edges: [[-9, 0.5], [3.0, 4.0]]}\n", 1
    )
    lesson = parse_lesson(source, Path("lesson.md"), PHASE)
    grading = lesson.grading
    weight = dict(grading.inputs)["params"]["weight"]
    assert weight.edges == ((-9.0, 0.5), (3.0, 4.0))
    assert all(type(v) is float for edge in weight.edges for v in edge)
    accept = {r.task.id: r.rule(ACCEPT) for r in rubric_for(lesson, grading)}
    assert accept["repair"] == Accept("any", ("float32", "float64"))
    assert accept["adam-by-hand"] == Accept("exact", ("float32", "float64"))
    assert accept["make-it-yours"] == Accept()
