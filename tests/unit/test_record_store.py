"""The reference store's parts without a child: the record's codec, the key, defensive reads,
and the compile cache's folder and readability (issue 35, items 2 and 5)."""

from __future__ import annotations

import json
import os
from dataclasses import replace

import pytest

from lessonkit.grade.batches.journal import JournalKey
from lessonkit.grade.channel.child_report import ChildReport
from lessonkit.grade.channel.child_report_codec import (
    BadChildReport,
    decode_child_report,
    encode_child_report,
)
from lessonkit.grade.channel.protocol import (
    CellReport,
    CellSpec,
    ErrorInfo,
    Request,
    RuleOutcome,
    ScenarioSpec,
)
from lessonkit.grade.channel.reference_store import (
    FORMAT,
    ReferenceStore,
    reference_key,
    reference_store,
)
from lessonkit.grade.channel.reported import (
    Array,
    KeyArray,
    Mapping,
    Module,
    NoneValue,
    Number,
    Opaque,
    Sequence,
    Text,
)
from lessonkit.grade.provenance.grading_key import grading_key
from lessonkit.run.cache_access import cache_problem
from lessonkit.run.isolation import UNSANDBOXED, Isolation, _cache_problem
from lessonkit.run.sandbox import Sandbox
from lessonkit.settings import NO_REFERENCE_STORE_VARIABLE, compile_cache_from, settings_around

SIGNER = JournalKey(b"k" * 32, "a test's key")
VALUES = {
    "none": NoneValue(),
    "flag": Number("bool", True),
    "count": Number("int", 3),
    "huge": Number("int", float(2**60)),
    "x": Number("float", -0.0),
    "name": Text("abc", 5),
    "w": Array("float32", (2, 2), (1.0, 2.5, -3.0, 4.0)),
    "big": Array("float32", (10_000,), None),
    "key": KeyArray("fry", "uint32", (2,), (0, 1, 2, 3)),
    "np": Module("numpy"),
    "tree": Mapping((("a", Number("int", 1)), (2, Sequence("tuple", ())), (1.5, NoneValue()))),
    "state": Sequence("ScaleState", (Number("int", 0), Text("", 0)), ("count", "mu")),
    "fn": Opaque("other", "function", None),
    "odd": Opaque("other", "object", "ValueError"),
    "deep": Opaque("big", "list", "too many entries"),
}


def record() -> ChildReport:
    error = ErrorInfo("exception", "AssertionError", "builtins", "no", ((1, 3, 1),), None, ())
    failed_jit = RuleOutcome("step", "error", replace(error, trees=(("got", VALUES["tree"]),)))
    runs = {
        ("lesson", 0): CellReport("reference-1", "lesson", 0, "ok", "hi\n", None, VALUES, None),
        ("batch-a", 1): CellReport(
            "reference-1", "run-2", 1, "error", "", error, {}, {"x": Number("float", 1.0)},
            (("jit", (RuleOutcome("f", "ok"), failed_jit)),),
        ),
    }  # fmt: skip
    return ChildReport(runs, None, None, ("optax.adam",))


def request(source: str = "x = 1", drawn: float = 0.5) -> Request:
    cells = (CellSpec(0, source, 0, "lesson", ()),)
    return Request(
        "reference-7",
        ("jax",),
        None,
        cells,
        None,
        (),
        (ScenarioSpec("run-1", {"x": drawn}),),
        None,
    )


def test_a_record_comes_back_exactly_whatever_order_it_was_run_in():
    kept = record()
    data = json.loads(json.dumps(encode_child_report(kept)))
    assert decode_child_report(data) == kept
    shuffled = ChildReport(dict(reversed(list(kept.runs.items()))), None, None, kept.patched)
    assert encode_child_report(shuffled) == encode_child_report(kept)


def test_only_a_clean_run_is_kept():
    with pytest.raises(ValueError):
        encode_child_report(replace(record(), stop_reason="the run stopped"))
    with pytest.raises(ValueError):
        encode_child_report(replace(record(), interfered="a report line is not an object"))


@pytest.mark.parametrize(
    "damage",
    [
        lambda d: d["cells"].append(d["cells"][0]),  # a cell twice
        lambda d: d["cells"][0][2].update(cell=99),  # a report of another cell
        lambda d: d["cells"][0][2].update(extra=1),  # a field no report has
        lambda d: d["cells"][1][2]["values"]["w"].update(shape=[3]),  # data and shape differ
        lambda d: d.update(patched="optax"),
        lambda d: d.update(more=1),
    ],
)
def test_a_damaged_record_is_refused(damage):
    data = json.loads(json.dumps(encode_child_report(record())))
    damage(data)
    with pytest.raises(BadChildReport):
        decode_child_report(data)


def test_the_key_changes_with_everything_the_reference_depends_on():
    names = {"lesson": "lesson", "run-1": "batch-a"}
    key = reference_key("state-02", "r1", 5, request(), names)
    assert key == reference_key("state-02", "r1", 5, replace(request(), id="reference-9"), names)
    others = [
        reference_key("state-02", "r1", 6, request(), names),  # seed
        reference_key("state-02", "r1", 5, request("x = 2"), names),  # the lesson's code
        reference_key("state-02", "r1", 5, request(drawn=0.25), names),  # drawn inputs
        reference_key("state-02", "r2", 5, request(), names),  # revision
        reference_key("state-03", "r1", 5, request(), names),  # lesson
        reference_key("state-02", "r1", 5, request(), {**names, "run-1": "probe-a"}),
    ]
    assert key not in others and len(set(others)) == len(others)


def test_the_store_reads_only_its_own_entries(tmp_path):
    store = ReferenceStore(tmp_path / "refs", SIGNER)
    key = "a" * 64
    assert store.load("state-02", key) is None  # nothing kept yet
    store.save("state-02", key, record())
    assert store.load("state-02", key) == record()
    assert store.load("state-02", "b" * 64) is None
    (path,) = store.folder.glob("*.json")
    assert oct(path.stat().st_mode & 0o777) == oct(0o600)  # mkstemp's mode: the user's alone
    for damaged in ("", "not json", "[]", '{"format": 1, "key": "' + key + '", "record": {}}'):
        path.write_text(damaged, encoding="utf-8")
        assert store.load("state-02", key) is None
    for other in (FORMAT - 1, FORMAT + 1):  # an older entry (fewer probe copies), a newer one
        entry = {"format": other, "key": key, "record": encode_child_report(record())}
        path.write_text(json.dumps(entry), encoding="utf-8")
        assert store.load("state-02", key) is None  # another format


def test_an_entry_not_signed_with_our_key_is_not_used(tmp_path):
    """Whoever can write the store but not read the key cannot make an entry it believes:
    an edited value (key and format kept), an entry without a MAC, or one signed with
    another key is ignored, as if missing."""
    store = ReferenceStore(tmp_path / "refs", SIGNER)
    key = "a" * 64
    store.save("state-02", key, record())
    (path,) = store.folder.glob("*.json")
    kept = json.loads(path.read_text(encoding="utf-8"))
    assert set(kept) == {"format", "key", "record", "mac"}
    edited = json.loads(json.dumps(kept).replace('"value": 3', '"value": 4', 1))
    assert edited != kept and decode_child_report(edited["record"]) != record()
    unsigned = {k: v for k, v in kept.items() if k != "mac"}
    forged = {**unsigned, "mac": JournalKey(b"x" * 32, "another").mac("reference", unsigned)}
    for entry in (edited, unsigned, forged):
        path.write_text(json.dumps(entry), encoding="utf-8")
        assert store.load("state-02", key) is None
    path.write_text(json.dumps(kept), encoding="utf-8")
    assert store.load("state-02", key) == record()


def test_an_unwritable_store_is_simply_not_used(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    ReferenceStore(blocker / "refs", SIGNER).save("state-02", "a" * 64, record())  # no exception


def test_the_store_keeps_the_newest_entries(tmp_path, monkeypatch):
    monkeypatch.setattr("lessonkit.grade.channel.reference_store.KEEP", 3)
    store = ReferenceStore(tmp_path, SIGNER)
    for n in range(5):
        store.save("state-02", f"{n}" * 64, record())
        os.utime(store._path("state-02", f"{n}" * 64), (n, n))
    kept = sorted(p.name[9:10] for p in tmp_path.glob("*.json"))
    assert kept == ["2", "3", "4"]


def test_the_compile_cache_folder_can_be_named(tmp_path, monkeypatch):
    monkeypatch.delenv("LESSONKIT_NO_COMPILE_CACHE", raising=False)
    monkeypatch.setenv("LESSONKIT_COMPILE_CACHE", str(tmp_path / "shared" / "jax"))
    assert compile_cache_from(os.environ) == tmp_path / "shared" / "jax"
    assert (tmp_path / "shared" / "jax").is_dir()
    monkeypatch.setenv("LESSONKIT_NO_COMPILE_CACHE", "1")
    assert compile_cache_from(os.environ) is None


def test_the_default_compile_cache_is_readable_by_others_whatever_the_umask(tmp_path, monkeypatch):
    monkeypatch.delenv("LESSONKIT_NO_COMPILE_CACHE", raising=False)
    monkeypatch.delenv("LESSONKIT_COMPILE_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    old = os.umask(0o077)
    try:
        folder = compile_cache_from(os.environ)
    finally:
        os.umask(old)
    assert folder is not None and folder.parent == tmp_path / "lessonkit"
    assert folder.stat().st_mode & 0o005 == 0o005


@pytest.mark.parametrize("umask", [0o000, 0o022, 0o077])
def test_cache_and_store_folders_have_their_modes_whatever_the_umask(tmp_path, monkeypatch, umask):
    """Under umask 000 `mkdir` made them 0777: any account could swap the store's entries
    (or the compile cache's) for its own. The store is the instructor's (0700), the compile
    cache and the folders above it readable by all and written by the owner only (0755)."""
    monkeypatch.delenv("LESSONKIT_NO_COMPILE_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    for named in ("", str(tmp_path / "shared" / "jax")):
        monkeypatch.setenv("LESSONKIT_COMPILE_CACHE", named)
        old = os.umask(umask)
        try:
            compiled = compile_cache_from(os.environ)
            store = ReferenceStore(tmp_path / "cache" / "lessonkit" / "references", SIGNER)
            store.save("state-02", "a" * 64, record())
        finally:
            os.umask(old)
        assert compiled is not None
        modes = {
            folder: oct(folder.stat().st_mode & 0o777)
            for folder in (
                compiled,
                *compiled.parents[: len(compiled.relative_to(tmp_path).parts) - 1],
            )
        }
        assert set(modes.values()) == {oct(0o755)}, modes
    assert oct(store.folder.stat().st_mode & 0o777) == oct(0o700)
    assert oct(store.folder.parent.stat().st_mode & 0o777) == oct(0o755)


def test_a_cache_others_cannot_read_is_found(tmp_path):
    folder = tmp_path / "cache"
    folder.mkdir()
    (folder / "jit_f-1-cache").write_bytes(b"x")
    os.chmod(folder / "jit_f-1-cache", 0o644)
    os.chmod(folder, 0o755)
    assert cache_problem(folder) is None
    os.chmod(folder / "jit_f-1-cache", 0o600)
    said = cache_problem(folder)
    assert said is not None and "1 of the 1 files" in said and "0600" in said
    assert cache_problem(folder, os.getuid(), os.getgid()) is None  # the owner reads it
    os.chmod(folder, 0o700)
    said = cache_problem(folder)
    assert said is not None and "mode 0700" in said and "chmod -R a+rX" in said


def test_the_isolation_says_it_once_in_its_note(tmp_path):
    folder = tmp_path / "cache"
    folder.mkdir(mode=0o700)
    os.chmod(folder, 0o700)
    privileged = Sandbox("bwrap", privileged=True)
    problem = _cache_problem(privileged, folder)
    assert "mode 0700" in problem
    assert _cache_problem(Sandbox("bwrap", privileged=False), folder) == ""  # the caller's id
    assert Isolation(privileged, cache=folder, cache_problem=problem).note == problem
    assert Isolation(privileged, cache=folder).note is None


def test_the_store_is_off_where_learner_code_runs_as_the_grader(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv(NO_REFERENCE_STORE_VARIABLE, raising=False)
    sandboxed = Isolation(Sandbox("bwrap", privileged=True))
    folder = tmp_path / "lessonkit" / "references"
    assert reference_store(sandboxed) == ReferenceStore(folder, grading_key(None))
    assert reference_store(UNSANDBOXED) is None  # a submission could write the store
    exposed = Isolation(Sandbox("bwrap", privileged=True), cache=tmp_path)
    assert reference_store(exposed) is None  # bound into the sandbox with the compile cache
    monkeypatch.setenv(NO_REFERENCE_STORE_VARIABLE, "1")
    enabled = settings_around(os.environ, sandboxed).reference_store  # as a command reads it
    assert reference_store(sandboxed, enabled=enabled) is None


def test_the_store_is_off_without_a_grading_key_of_its_own(monkeypatch, tmp_path):
    """No entry can be proved with a key others can read (or none at all)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv(NO_REFERENCE_STORE_VARIABLE, raising=False)
    shared = tmp_path / "shared.key"
    shared.write_text("ab" * 32 + "\n", encoding="ascii")
    shared.chmod(0o644)
    monkeypatch.setenv("LESSONKIT_GRADING_KEY", str(shared))
    assert reference_store(Isolation(Sandbox("bwrap", privileged=True))) is None
