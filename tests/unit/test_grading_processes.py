"""What the parent tells a grading process about where packages are, and when children
start afresh instead of being forks: decisions made here, without starting any process."""

from __future__ import annotations

import errno
import json
import os
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lessonkit.grading_child.main import use_import_paths
from lessonkit.run import forking
from lessonkit.run.import_paths import extra_paths
from lessonkit.run.isolation import Isolation

from conftest import invoke

STDLIB = ["/py/lib/python311.zip", "/py/lib/python3.11", "/py/lib/python3.11/lib-dynload"]
VENV = "/venv/lib/python3.11/site-packages"


def test_pythonpath_entries_are_chosen_in_the_parents_order():
    path = ["/script", "/pkgs/b", "/pkgs/a", *STDLIB, VENV]
    chosen = extra_paths(path, pythonpath="/pkgs/a:/pkgs/b", user_sites=[])
    assert chosen == ("/pkgs/b", "/pkgs/a")  # not the script's folder, stdlib nor venv


def test_the_user_site_and_the_folders_its_pth_files_add(tmp_path):
    user_site = tmp_path / "site"
    user_site.mkdir()
    (user_site / "more.pth").write_text("# a comment\nimport os\n../elsewhere\n/abs/pkgs\n")
    elsewhere = str(tmp_path / "elsewhere")
    path = ["", *STDLIB, str(user_site), elsewhere, "/abs/pkgs", VENV, "/added/at/run/time"]
    chosen = extra_paths(path, pythonpath=None, user_sites=[str(user_site)])
    assert chosen == (str(user_site), elsewhere, "/abs/pkgs")


def test_paths_given_by_the_parent_are_passed_on():
    path = ["/given", *STDLIB, VENV]
    assert extra_paths(path, pythonpath=None, user_sites=[], given=["/given"]) == ("/given",)


@given(st.lists(st.sampled_from(["/a", "/b", "/c", *STDLIB, VENV, ""]), max_size=12))
def test_only_wanted_entries_once_each_in_path_order(path):
    chosen = extra_paths(path, pythonpath="/a:/c", user_sites=[])
    assert chosen == tuple(dict.fromkeys(p for p in path if p in ("/a", "/c")))


def test_the_child_puts_the_parents_paths_first_once(monkeypatch):
    monkeypatch.setattr(sys, "path", [*STDLIB, VENV, "/b"])
    assert use_import_paths(json.dumps(["/a", "/b"])) == ["/a", "/b"]
    assert sys.path == ["/a", *STDLIB, VENV, "/b"]


def _fails(number: int):
    def call():
        raise OSError(number, os.strerror(number))

    return call


def test_the_first_missing_call_is_named_with_the_kernels_words():
    calls = [("fine", lambda: None), ("pidfd_open", _fails(errno.ENOSYS)), ("x", _fails(1))]
    assert forking.missing_call(calls) == "pidfd_open ([Errno 38] Function not implemented)"
    assert forking.missing_call([("seccomp", _fails(errno.EPERM))]).startswith("seccomp ([Errno 1]")
    assert forking.missing_call([("fine", lambda: None)]) == ""


@pytest.mark.skipif(not forking.FORKING, reason="children are forks on Linux only")
def test_without_pidfd_open_children_are_still_forks_and_nothing_is_said(monkeypatch):
    """As under gVisor: the starter stops its forks instead of the parent (issue 51)."""

    def enosys(pid: int) -> int:
        raise OSError(errno.ENOSYS, os.strerror(errno.ENOSYS))

    monkeypatch.setattr(os, "pidfd_open", enosys)
    forking.fork_problem.cache_clear()
    forking.pidfds.cache_clear()
    try:
        assert forking.forks_children() is True and forking.pidfds() is False
        assert Isolation(reason="x").note is not None
        assert "pidfd" not in (Isolation(reason="x").note or "")
    finally:
        forking.fork_problem.cache_clear()
        forking.pidfds.cache_clear()


def test_json_failures_are_one_json_object():
    code, out, err = invoke(["check", "state-02", "--jobs", "2", "--json"])
    assert code == 2
    data = json.loads(out)
    assert data["command"] == "check"
    assert "only apply to --batch" in data["error"]["message"]
    assert data["error"]["fix"] == "add --batch DIR"
    assert "only apply to --batch" in err  # the person still reads it on stderr


def test_gvisor_is_told_by_the_kernel_it_names(tmp_path):
    from lessonkit.run.isolation import GVISOR_KERNEL, under_gvisor

    version = tmp_path / "version"
    version.write_text(GVISOR_KERNEL + "\n", encoding="ascii")
    assert under_gvisor(version)
    version.write_text("Linux version 6.1.0-18-amd64 (debian-kernel@lists.debian.org)\n")
    assert not under_gvisor(version)
    assert not under_gvisor(tmp_path / "missing")
