"""The instructor's grading key: made once with mode 0600, read back, and refused where it
could have been planted or read by others."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from lessonkit.errors import UsageError
from lessonkit.grade.provenance.grading_key import KEY_BYTES, default_key_path, grading_key


def test_the_key_is_made_on_first_use_readable_by_its_owner_only(tmp_path):
    path = tmp_path / "config" / "lessonkit" / "grading.key"
    first = grading_key(str(path))
    assert len(first.secret) == KEY_BYTES and first.where.endswith("grading.key")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert grading_key(str(path)).secret == first.secret  # the same key every time after
    assert first.secret.hex() not in repr(first)
    assert [p.name for p in path.parent.iterdir()] == ["grading.key"]  # no temporary left


def test_the_default_key_is_in_the_user_s_config_folder():
    assert default_key_path({"XDG_CONFIG_HOME": "/c", "HOME": "/h"}) == Path(
        "/c/lessonkit/grading.key"
    )
    assert default_key_path({"LESSONKIT_GRADING_KEY": "/k/key", "XDG_CONFIG_HOME": "/c"}) == Path(
        "/k/key"
    )
    assert default_key_path({}) == Path.home() / ".config" / "lessonkit" / "grading.key"


def test_a_key_inside_the_submissions_or_an_output_folder_is_refused(tmp_path):
    submissions, out = tmp_path / "class", tmp_path / "results"
    for folder in (submissions, out):
        with pytest.raises(UsageError, match="could have planted it"):
            grading_key(str(folder / "grading.key"), not_inside=(submissions, out))
    assert not submissions.exists() and not out.exists()  # nothing made there
    link = tmp_path / "linked.key"  # a key that resolves into an output folder
    out.mkdir()
    grading_key(str(out / "real.key"))
    link.symlink_to(out / "real.key")
    with pytest.raises(UsageError, match="is inside"):
        grading_key(str(link), not_inside=(out,))
    assert grading_key(str(link)).secret == grading_key(str(out / "real.key")).secret  # mounted


@pytest.mark.skipif(os.name != "posix", reason="file modes are POSIX")
def test_a_key_others_can_read_or_that_is_no_key_is_refused(tmp_path):
    path = tmp_path / "grading.key"
    grading_key(str(path))
    path.chmod(0o644)
    with pytest.raises(UsageError, match=r"can be read or changed by others \(mode 0644\)"):
        grading_key(str(path))
    path.write_text("not hex\n", encoding="utf-8")
    path.chmod(0o600)
    with pytest.raises(UsageError, match="is not a grading key"):
        grading_key(str(path))
    with pytest.raises(UsageError, match="is not a regular file"):
        grading_key(str(tmp_path))


def _as_root() -> None:
    """Skip where only root can give a file to another account, but never under CI, which
    runs as root: there the test must run."""
    if os.geteuid() != 0:
        if os.environ.get("CI") == "true":
            pytest.fail("CI runs as root, so this test must run there")
        pytest.skip("only root can give a file to another account")


@pytest.mark.skipif(os.name != "posix", reason="file owners are POSIX")
def test_a_key_another_account_owns_is_refused_like_one_with_loose_bits(tmp_path):
    _as_root()
    path = tmp_path / "grading.key"
    grading_key(str(path))
    os.chown(path, 65534, 65534)  # nobody's: nobody can now read it and sign with it
    with pytest.raises(UsageError, match=r"is owned by another account \(uid 65534\)"):
        grading_key(str(path))


@pytest.mark.skipif(os.name != "posix", reason="file owners are POSIX")
def test_a_key_in_a_folder_another_account_owns_is_refused(tmp_path):
    _as_root()
    folder = tmp_path / "theirs"
    grading_key(str(folder / "grading.key"))
    os.chown(folder, 65534, 65534)  # its owner could put its own key in the key's place
    with pytest.raises(UsageError, match=r"which another account owns \(uid 65534"):
        grading_key(str(folder / "grading.key"))


@pytest.mark.skipif(os.name != "posix", reason="file modes are POSIX")
def test_a_key_in_a_folder_others_can_write_is_refused_at_any_level(tmp_path):
    shared = tmp_path / "shared"
    path = shared / "mine" / "grading.key"
    made = grading_key(str(path))
    shared.chmod(0o777)  # anyone can rename `mine` away and put a folder of theirs there
    with pytest.raises(UsageError, match=r"which another account can write \(uid \d+, mode 0777"):
        grading_key(str(path))
    link = tmp_path / "linked.key"  # named through a link: its target's folders count too
    link.symlink_to(path)
    with pytest.raises(UsageError, match="can write"):
        grading_key(str(link))
    shared.chmod(0o1777)  # sticky, as /tmp: none can rename what is not theirs
    assert grading_key(str(path)).secret == made.secret
    open_folder = tmp_path / "open"
    open_folder.mkdir()
    open_folder.chmod(0o777)
    with pytest.raises(UsageError, match="can write"):  # a new key is not made there
        grading_key(str(open_folder / "new.key"))
    assert list(open_folder.iterdir()) == []


@pytest.mark.skipif(os.name != "posix", reason="file modes are POSIX")
def test_the_folders_made_for_a_key_are_private_whatever_the_umask(tmp_path):
    old = os.umask(0)
    try:
        grading_key(str(tmp_path / "config" / "lessonkit" / "grading.key"))
    finally:
        os.umask(old)
    for folder in (tmp_path / "config", tmp_path / "config" / "lessonkit"):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder
