"""What a receipt keeps of this machine's paths: nothing but paths relative to the
repository and shortened prefixes (`<site-packages>`, `<stdlib>`, `~`, `<tmp>`)."""

from __future__ import annotations

import os
import sysconfig
import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from lessonkit.receipts import machine_paths
from lessonkit.receipts.machine_paths import without_machine_paths

ROOT = Path("/srv/courses/jax-course")
HOME = os.path.expanduser("~")


def test_a_jax_warning_keeps_the_package_path_below_site_packages_only():
    text = (
        "/home/ana/.venv/lib/python3.11/site-packages/jax/_src/xla_bridge.py:900: UserWarning: "
        'no TPU found\n  File "/usr/lib/python3/dist-packages/numpy/core.py", line 3\n'
    )
    assert without_machine_paths(text, ROOT) == (
        "<site-packages>/jax/_src/xla_bridge.py:900: UserWarning: no TPU found\n"
        '  File "<site-packages>/numpy/core.py", line 3\n'
    )


def test_paths_in_the_repository_become_relative_to_it():
    text = f'File "{ROOT}/phases/03-state/02/code/main.py", line 9; cwd {ROOT}\n'
    assert (
        without_machine_paths(text, ROOT)
        == 'File "phases/03-state/02/code/main.py", line 9; cwd .\n'
    )


def test_a_folder_whose_name_only_starts_like_the_repository_is_not_the_repository():
    text = f"{ROOT}-old/notes.txt and /x{ROOT}/main.py"
    assert without_machine_paths(text, ROOT) == text


def test_home_temporary_and_standard_library_folders_are_shortened():
    stdlib = sysconfig.get_paths()["stdlib"]
    temp = tempfile.gettempdir()
    other = "/opt/py/lib/python3.13/re.py"
    text = f"{HOME}/notes.txt {temp}/lessonkit-x/cells.json {stdlib}/warnings.py {other}"
    assert without_machine_paths(text, ROOT) == (
        "~/notes.txt <tmp>/lessonkit-x/cells.json <stdlib>/warnings.py <stdlib>/re.py"
    )


def test_the_repository_inside_the_home_folder_is_still_relative():
    root = Path(HOME) / "course"
    assert without_machine_paths(f"{root}/code/main.py", root) == "code/main.py"


_NAME = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_", min_size=1, max_size=8)


@given(
    user=_NAME,
    folders=st.lists(_NAME, min_size=0, max_size=3),
    module=_NAME,
    before=st.sampled_from(["", " ", '"', "(", "\n"]),
)
def test_no_installed_package_folder_survives(user, folders, module, before):
    path = "/".join(["", "home", user, *folders, "lib", "python3.11", "site-packages", module])
    shortened = without_machine_paths(f"{before}{path}.py:3", ROOT)
    assert shortened == f"{before}<site-packages>/{module}.py:3"


def test_a_folder_on_pythonpath_is_a_package_folder_whatever_its_name(monkeypatch):
    """A TPU image keeps JAX in /opt/device-scrub, found through PYTHONPATH."""
    monkeypatch.setattr(machine_paths, "import_paths", lambda: ("/opt/device-scrub",))
    warning = "/opt/device-scrub/jax/_src/cloud_tpu_init.py:88: UserWarning: hugepages"
    assert without_machine_paths(warning, ROOT) == (
        "<site-packages>/jax/_src/cloud_tpu_init.py:88: UserWarning: hugepages"
    )


def test_the_repositorys_own_source_folder_stays_relative(monkeypatch):
    monkeypatch.setattr(machine_paths, "import_paths", lambda: (f"{ROOT}/src",))
    assert without_machine_paths(f"{ROOT}/src/lessonkit/cli.py", ROOT) == "src/lessonkit/cli.py"
