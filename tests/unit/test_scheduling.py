"""How the suite is spread over xdist workers (conftest.scope_of)."""

from conftest import scope_of


def test_an_integration_or_browser_module_is_one_unit():
    for nodeid in (
        "tests/integration/test_grade_tasks.py::test_a[x]",
        "tests/integration/test_grade_tasks.py::test_b",
    ):
        assert scope_of(nodeid) == "tests/integration/test_grade_tasks.py"
    assert scope_of("tests/browser/test_browser.py::test_axe[375]") == (
        "tests/browser/test_browser.py"
    )


def test_unit_tests_and_single_hostile_cases_go_one_by_one():
    for nodeid in (
        "tests/unit/test_checks.py::test_a",
        "tests/hostile/test_grade_hostile_suite.py::test_case[value-forgery/x/single]",
    ):
        assert scope_of(nodeid) == nodeid


def test_the_hostile_batch_cases_are_one_unit():
    a = "tests/hostile/test_grade_hostile_suite.py::test_case[process-escape/a/batch]"
    b = "tests/hostile/test_grade_hostile_suite.py::test_case[filesystem-damage/b/batch]"
    assert scope_of(a) == scope_of(b) == "hostile-batch"


def test_a_hostile_module_is_one_unit_so_its_shared_fixture_is_made_once():
    """The gVisor pod's week (about a minute) was graded once per worker that took one of
    its tests."""
    for nodeid in (
        "tests/hostile/test_gvisor_pod.py::test_the_batch_finishes",
        "tests/hostile/test_gvisor_pod.py::test_no_blank_file_passes",
    ):
        assert scope_of(nodeid) == "tests/hostile/test_gvisor_pod.py"
