"""Issue 61: similarity that accuses no honest student and sees through disguise.

The class (`similarity_cases.the_class`, written by hand) has three honest students who each
wrote the natural short answer to every task, six with longer answers of their own, a copy
of each of those six (byte for byte, with dead statements inserted, helpers extracted and
inlined, loops written as comprehensions, statements reordered, and all of these together
with names, comments and layout changed), and a blank file. On the code before issue 61
the honest trio were "1.00 exact copy" at rank 1 to 4 and the copy under every disguise at
0.30, below the default threshold.
"""

from __future__ import annotations

import hashlib
from itertools import combinations

import pytest
import similarity_cases as cases
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lessonkit.course.own_code import own_code
from lessonkit.course.pair_view import pair_view
from lessonkit.course.similarity import compare, work_of
from lessonkit.lesson.catalog import find_lesson

FILES = cases.the_class()
COPIED = cases.copied_pairs()


@pytest.fixture(scope="module")
def state02():
    return find_lesson(cases.LESSON, cases.REPO)


@pytest.fixture(scope="module")
def works(state02):
    return {s: _work(state02, s, t) for s, t in FILES.items()}


def _work(lesson, student: str, text: str):
    data = text.encode()
    return work_of(lesson, student, f"{student}.py", hashlib.sha256(data).hexdigest(), data)


def _honest_pairs() -> list[tuple[str, str]]:
    students = sorted(s for s in FILES if s != "blank")
    return [pair for pair in combinations(students, 2) if pair not in COPIED]


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(order=st.permutations(sorted(FILES)))
def test_every_copy_ranks_above_every_honest_pair_in_every_order(state02, works, order):
    """Each disguise alone or all together leaves the copy above every honest pair, the
    natural trio included; at the default threshold exactly the copies are listed."""
    report = compare(state02, [works[s] for s in order], threshold=0.0)
    scores = {(p.first, p.second): p.score for p in report.pairs}
    copies = {pair: scores[pair] for pair in COPIED}
    honest = {pair: scores.get(pair, 0.0) for pair in _honest_pairs()}
    assert min(copies.values()) > max(honest.values()), (copies, max(honest.items()))
    listed = compare(state02, [works[s] for s in order])
    assert {(p.first, p.second) for p in listed.pairs} == COPIED
    assert [p.score for p in listed.pairs] == sorted((p.score for p in listed.pairs), reverse=True)


@pytest.mark.parametrize("copy", sorted(cases.COPIES))
def test_a_disguise_leaves_the_compared_code_as_the_originals(state02, copy):
    """Inserted dead statements, helpers, loops, reordering (and renaming, comments, layout)
    are undone: every task's code as compared is token for token the original's."""
    original, _, _ = cases.COPIES[copy]
    mine = own_code(state02, f"{copy}.py", FILES[copy].encode())
    theirs = own_code(state02, f"{original}.py", FILES[original].encode())
    for task in cases.ANSWERS:
        assert [line.tokens for line in mine[task].compared] == [
            line.tokens for line in theirs[task].compared
        ], task


def test_the_natural_answer_is_no_exact_copy_and_says_who_else_wrote_it(state02, works):
    """The trio share only what a third student wrote too: no pair of them is exact (their
    names differ), each shared statement says how many others wrote it, and the score is at
    most half of one for code nobody else wrote."""
    report = compare(state02, list(works.values()), threshold=0.0)
    pairs = {(p.first, p.second): p for p in report.pairs}
    for pair in combinations(sorted(cases.NATURAL), 2):
        found = pairs[pair]
        assert found.exact is None and found.score < 0.5
        assert found.shared and all(line.others >= 1 for line in found.shared)
    for pair in COPIED:
        alone = [line for line in pairs[pair].shared if line.others == 0]
        assert len(alone) > len(pairs[pair].shared) / 2, pair
    first = report.pairs[0]
    assert (first.first, first.second, first.exact, first.exact_others) == (
        "copy-bytes",
        "long-1",
        "the same bytes",
        0,
    )


def test_the_same_common_code_is_exact_yet_ranks_below_every_copy(state02, works):
    """Two more students write nat-1's very code (their own spacing and comments): an exact
    copy up to layout and comments, which says one other student handed in the same, and
    still ranks below every real copy, since five wrote it."""
    code = cases.NATURAL["nat-1"]
    relaid = {task: f"# my answer\n{text.replace(' = ', '  =  ')}" for task, text in code.items()}
    again = {task: text.replace(" ** 2", "**2") + "  # done" for task, text in code.items()}
    more = {"nat-4": cases.practice_file(relaid), "nat-5": cases.practice_file(again)}
    everyone = [*works.values(), *(_work(state02, s, t) for s, t in more.items())]
    report = compare(state02, everyone, threshold=0.0)
    pairs = {(p.first, p.second): p for p in report.pairs}
    same = pairs[("nat-1", "nat-4")]
    assert same.exact == "the same code up to layout and comments" and same.exact_others == 1
    assert "1 other student handed in the same" in same.label
    assert same.score < min(pairs[pair].score for pair in COPIED)


def test_the_side_by_side_view_marks_the_disguised_lines(state02, works):
    """The view shows what each student wrote: the copy's comprehension and the original's
    loop are marked as shared, the copy's dead statements are not."""
    report = compare(state02, list(works.values()), threshold=0.0)
    pair = next(p for p in report.pairs if (p.first, p.second) == ("copy-all", "long-6"))
    view = pair_view(state02, pair, FILES["copy-all"].encode(), FILES["long-6"].encode())
    sides = {task.task: task for task in view.tasks}
    copy_lines = {line.text.strip(): line.shared for line in sides["nested-model"].first}
    original = {line.text.strip(): line.shared for line in sides["nested-model"].second}
    assert copy_lines["acts = [wi * xi for wi, xi in zip(params['weight'], x)]"]
    assert original['for w_i, x_i in zip(params["weight"], x):']
    assert original["acts.append(w_i * x_i)"]
    assert not copy_lines["dbg = 0"] and not copy_lines["h_old = h"]
    repair = {line.text.strip(): line.shared for line in sides["repair"].second}
    assert repair["def sgd(p, g):"] is False  # the helper is compared where it is used
    assert repair["fixed = jax.tree_util.tree_map(sgd, params, grads)"]


def test_code_that_does_not_parse_is_compared_as_written(state02, works):
    """A cell with a syntax error has no canonical form: it is compared statement by
    statement as written, so a copy of broken code is still found, and the view marks it."""
    broken = dict(cases.LONG["long-5"])
    broken["make-it-yours"] += "\nif norm_squared >\n    print('unfinished')"
    files = {"broken-a": cases.practice_file(broken), "broken-b": cases.practice_file(broken)}
    mine = own_code(state02, "broken-a.py", files["broken-a"].encode())["make-it-yours"]
    assert any(line.text.startswith("if norm_squared >") for line in mine.compared)
    everyone = [w for s, w in works.items() if s not in ("long-5", "copy-reorder")]
    everyone += [_work(state02, s, t) for s, t in files.items()]
    report = compare(state02, everyone)
    top = next(p for p in report.pairs if (p.first, p.second) == ("broken-a", "broken-b"))
    assert top.exact == "the same bytes" and top.score > 0.5
    view = pair_view(state02, top, files["broken-a"].encode(), files["broken-b"].encode())
    lines = {line.text: line.shared for task in view.tasks for line in task.first}
    assert lines["if norm_squared >"] and lines['w = grads["weight"]']
