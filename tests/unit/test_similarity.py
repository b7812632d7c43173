"""Shared work between students: disguised copies of the state-02 answers rank above every
pair of independent answers, exact copies first, and blank files never match.

The answers and the disguises are in `similarity_cases`: four right answers to each core
task written independently, and copies of them renamed, reordered, recommented and
reformatted (joined and split lines) with a seed hypothesis chooses.
"""

from __future__ import annotations

import builtins
import hashlib
import json
import keyword
import random
import re
from itertools import combinations

import pytest
import similarity_cases as cases
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lessonkit.course.fingerprints import WINDOW, K, fingerprints, normal_tokens, winnow
from lessonkit.course.gradebook import Gradebook
from lessonkit.course.own_code import own_lines
from lessonkit.course.similarity import EVIDENCE_NOTE, Work, compare, work_of
from lessonkit.grade.judging.results import PASSED, GradeReport, TaskResult
from lessonkit.lesson.catalog import find_lesson

from conftest import invoke


@pytest.fixture(scope="module")
def state02():
    return find_lesson(cases.LESSON, cases.REPO)


def _work(lesson, student: str, text: str) -> Work:
    data = text.encode()
    return work_of(lesson, student, f"{student}.py", hashlib.sha256(data).hexdigest(), data)


def _class(lesson, seed: int) -> dict[str, str]:
    rng = random.Random(seed)
    files = {f"independent-{i}": cases.independent_file(i) for i in range(4)}
    files |= {f"disguised-{i}": cases.disguised_file(i, rng) for i in range(4)}
    files |= {"blank-a": cases.blank_file(), "blank-b": cases.blank_file()}
    files["exact-1"] = files["independent-1"]
    return files


def _scores(lesson, files: dict[str, str]):
    works = [_work(lesson, s, t) for s, t in sorted(files.items())]
    report = compare(lesson, works, threshold=0.0)
    return report, {(p.first, p.second): p for p in report.pairs}


def _origin(student: str) -> str:
    """Whose answers a student's file holds: `disguised-2` and `independent-2` are one."""
    return "1" if student == "exact-1" else student.rsplit("-", 1)[1]


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1))
def test_every_disguised_pair_ranks_above_every_independent_pair(state02, seed):
    files = _class(state02, seed)
    report, pairs = _scores(state02, files)
    students = [s for s in sorted(files) if not s.startswith("blank")]
    copied, independent = [], []
    for a, b in combinations(students, 2):
        score = pairs[(a, b)].score if (a, b) in pairs else 0.0
        (copied if _origin(a) == _origin(b) else independent).append((score, a, b))
    assert min(copied) > max(independent), (min(copied), max(independent))
    # the same bytes are an exact copy, and nothing else is; disguised-1 wrote the same
    # code too, so what the three share counts half (a third student wrote it)
    exact = [p for p in report.pairs if p.exact]
    assert [(p.first, p.second, p.exact, p.exact_others) for p in exact] == [
        ("exact-1", "independent-1", "the same bytes", 0)
    ]
    assert exact[0].score < pairs[("disguised-0", "independent-0")].score
    # every disguised copy shares code in every task with its original
    for i in range(4):
        tasks = {t.task for t in pairs[(f"disguised-{i}", f"independent-{i}")].tasks}
        assert set(cases.ANSWERS) <= tasks


def test_blank_files_share_nothing(state02):
    """A file with only the scaffold (every todo left) is nobody's copy, not even another
    blank file's: the scaffold's lines are the lesson's, not the learner's."""
    files = _class(state02, 0)
    report, pairs = _scores(state02, files)
    assert not [p for p in report.pairs if "blank-a" in (p.first, p.second)]
    assert _work(state02, "blank", cases.blank_file()).blank
    assert ("blank-a", "blank-b") not in pairs


def test_an_exact_copy_is_the_same_code_up_to_layout_and_comments(state02):
    """Comments, spacing and quotes alone make an exact copy; renamed names do not (the
    natural answer is often the same code but for its names), though they score the same."""
    original = cases.independent_file(2)
    relaid = original.replace("z = ", "# the inner product\nz  =  ").replace(
        '+ params["bias"]\n', "+ params['bias']\n"
    )
    renamed = relaid.replace("loss_grad", "gradient_of_loss").replace("z", "q")
    files = {"a": original, "b": relaid, "c": renamed, "d": cases.independent_file(0)}
    _, pairs = _scores(state02, files)
    assert original != relaid
    assert pairs[("a", "b")].exact == "the same code up to layout and comments"
    assert pairs[("a", "b")].exact_others == 0 and "no other student" in pairs[("a", "b")].label
    assert pairs[("a", "c")].exact is None and pairs[("b", "c")].exact is None
    assert pairs[("a", "c")].score == pairs[("a", "b")].score
    assert ("a", "d") not in pairs or pairs[("a", "d")].exact is None


def test_common_code_counts_for_little(state02):
    """A line the whole class writes alike weighs less than one only two students share."""
    common = 'manual = jnp.sum(grads["weight"] ** 2) + grads["bias"] ** 2'
    rare = "norm_squared = jax.tree.reduce(jnp.add, jax.tree.map(jnp.vdot, grads, grads))"
    mine = [f"norm_squared = {i} * jnp.sum(jnp.ones({i}))" for i in range(6)]
    files = {
        f"s{i}": cases.practice_file({"make-it-yours": f"{mine[i]}\n{common}"}) for i in range(6)
    }
    files["t0"] = cases.practice_file({"make-it-yours": f"{rare}\n{common}"})
    files["t1"] = cases.practice_file({"make-it-yours": f"{rare}\nmanual = 7 + {common[9:]}"})
    _, pairs = _scores(state02, files)
    assert pairs[("t0", "t1")].score > max(
        p.score for (a, b), p in pairs.items() if a.startswith("s") and b.startswith("s")
    )


def test_own_lines_drop_only_the_given_lines(state02):
    task = next(t for t in state02.tasks if t.id == "nested-model")
    cell = "# TASK nested-model · edited title\nnested = {}\ndef nested_loss(p):\n    pred = 1\n"
    assert own_lines(task, cell) == "nested = {}\n    pred = 1"


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.sampled_from(["a", "b", "c", "d"]), min_size=1, max_size=40),
    st.integers(1, 6),
)
def test_winnowing_keeps_a_hash_of_every_window(values, window):
    """Every run of `window` hashes has one of its own kept (the winnowing guarantee)."""
    hashes = tuple(ord(v) for v in values)
    kept = winnow(hashes, window)
    positions = {p for p, _ in kept}
    for start in range(max(1, len(hashes) - window + 1)):
        assert positions & set(range(start, start + window))
    assert all(hashes[p] == h for p, h in kept)


_NAMES = st.from_regex(r"[a-z][a-z0-9_]{0,6}", fullmatch=True).filter(
    lambda n: (
        not keyword.iskeyword(n)
        and not keyword.issoftkeyword(n)
        and not hasattr(builtins, n)  # a builtin (`id`, `sum`) is kept as itself, as it should be
        and n not in {"jnp", "jax", "grads"}
    )
)


@settings(max_examples=40, deadline=None)
@given(_NAMES, _NAMES, st.text("# abc", max_size=10))
def test_names_comments_and_line_breaks_do_not_change_the_tokens(first, second, comment):
    plain = f"{first} = jnp.sum(grads)\n{second} = {first} * 2.0\n"
    disguised = f"# {comment}\nq = jnp.sum(\n    grads)  # {comment}\nr = q * 2.; \n"
    assert normal_tokens(plain) == normal_tokens(disguised)
    assert fingerprints(normal_tokens(plain)) == fingerprints(normal_tokens(disguised))


def test_a_shared_run_past_the_guarantee_is_always_found():
    shared = "total = jnp.sum(jax.tree.map(lambda a, b: a * b, grads, params)) + 1.5\n"
    one = normal_tokens("x = 1\ny = [x]\n" + shared)
    two = normal_tokens(shared + "z = {'k': 2}\n")
    assert len([t for t in normal_tokens(shared) if t != "<end>"]) >= K + WINDOW - 1
    assert fingerprints(one) & fingerprints(two)


def test_lessonkit_similar_reads_the_gradebook(state02, tmp_path):
    """The latest submission of each student is compared; `--json` is the report's data."""
    book_path = tmp_path / "course.sqlite"
    with Gradebook(book_path) as book:
        book.add_attempts(
            [
                cases.graded(state02, "ana", cases.independent_file(0), 1.0),
                cases.graded(state02, "ben", cases.blank_file(), 1.0),  # then copies ana's file
                cases.graded(state02, "ben", cases.independent_file(0), 2.0),
                cases.graded(state02, "cy", cases.disguised_file(2, random.Random(5)), 1.0),
                cases.graded(state02, "dee", cases.independent_file(2), 1.0),
                cases.graded(state02, "eve", cases.independent_file(3), 1.0),
            ]
        )
    code, out, err = invoke(
        ["similar", cases.LESSON, "--gradebook", str(book_path), "--json"], root=cases.REPO
    )
    assert code == 0, err
    data = json.loads(out)
    assert data["students"] == 5 and data["note"] == EVIDENCE_NOTE
    found = [(p["first"], p["second"], p["exact"]) for p in data["pairs"]]
    assert found == [("ana", "ben", "the same bytes"), ("cy", "dee", None)]
    others = [line["others"] for line in data["pairs"][0]["shared"]]
    assert others == sorted(others) and others.count(0) > len(others) / 2
    code, out, _ = invoke(
        ["similar", cases.LESSON, "--gradebook", str(book_path), "--threshold", "0.8"],
        root=cases.REPO,
    )
    assert code == 0 and "ana · ben" in out and "exact copy" in out and "cy · dee" not in out
    assert "written by no other student" in " ".join(out.split())
    assert "never a verdict" in " ".join(out.split())
    code, _, err = invoke(
        ["similar", cases.LESSON, "--gradebook", str(book_path), "--threshold", "2"],
        root=cases.REPO,
    )
    assert code == 2 and "outside 0 to 1" in err


def test_the_report_lists_the_pairs_linked_to_their_side_by_side_view(state02, tmp_path):
    """`lessonkit report` gains the pairs, each linked to its view on the page, where the
    lines both share are marked (and read out as shared) and a line of one's own is not."""
    book_path = tmp_path / "course.sqlite"
    own_line = "print('my own check', 12345)"
    rng = random.Random(3)
    copy = re.sub(
        r"(?m)^(# TASK repair .*)$", lambda m: f"{m[1]}\n{own_line}", cases.disguised_file(2, rng)
    )
    with Gradebook(book_path) as book:
        book.add_attempts(
            [
                cases.graded(state02, "ana", cases.independent_file(2)),
                cases.graded(state02, "ben", cases.independent_file(0)),
                cases.graded(state02, "cy", copy),
                cases.graded(state02, "dee", cases.blank_file()),
            ]
        )
    page = tmp_path / "report.html"
    argv = ["report", cases.LESSON, "--gradebook", str(book_path), "--output", str(page)]
    code, _, err = invoke(argv, root=cases.REPO)
    assert code == 0, err
    html = page.read_text()
    section = html[html.index('id="similar-heading"') :]
    assert 'href="#pair-1">Compare ana and cy</a>' in section
    assert 'id="pair-1"' in section and 'href="#pair-2"' not in section
    assert "never a verdict" in section
    marked = re.findall(r"<mark><span class=\"visually-hidden\">shared: </span>(.*?)</mark>", html)
    assert any("jax.tree.structure(nested)" in line for line in marked)
    assert "my own check" in html and not any("my own check" in line for line in marked)


def test_intake_says_when_a_files_bytes_are_another_students(state02, tmp_path):
    """A file whose bytes another student handed in (before, or in the same batch) is
    named when it is kept; untouched files, alike for everyone, are not."""
    from rich.console import Console

    from lessonkit.commands._course import say_gradebook_kept
    from lessonkit.course.batch_gradebook import CourseIntake
    from lessonkit.grade.batches.journal import JournalEntry

    def entry(path: str, text: str) -> JournalEntry:
        data = text.encode()
        tasks = tuple(
            TaskResult(t.id, t.title, PASSED, "", None, t.optional) for t in state02.tasks
        )
        report = GradeReport(state02.meta.id, path, tasks, (), 1.0, 7)
        return JournalEntry("r1", path, hashlib.sha256(data).hexdigest(), 1.0, report, data)

    book = str(tmp_path / "course.sqlite")
    first = CourseIntake.open(book, None, None).keep(
        state02, [entry("ana.py", cases.independent_file(0))], "fp"
    )
    assert first.same_bytes == ()
    course = CourseIntake.open(book, None, None)
    kept = course.keep(
        state02,
        [
            entry("ben.py", cases.independent_file(0)),  # ana's bytes
            entry("cy.py", cases.blank_file()),
            entry("dee.py", cases.blank_file()),  # cy's bytes, but nobody's code
            entry("eve.py", cases.independent_file(3)),
        ],
        "fp",
    )
    assert [(s.student, s.others) for s in kept.same_bytes] == [("ben", ("ana",))]
    out = Console(record=True, width=200)
    say_gradebook_kept(course, kept, out)
    assert "ben.py (ben): the same bytes as the submission of ana" in out.export_text()
