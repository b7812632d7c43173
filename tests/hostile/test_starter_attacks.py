"""Red team: learner code in a fork of the grading starter (`run/starter.py`, `run/starter_main.py`,
`run/isolate.py`) against the starter, its sibling forks and its own limits.

Each test runs hostile cells in forks of one starter, as a `Grader` does for every file of a
batch, and asserts that the attack fails. Modes: "privileged" (this machine: root and
bubblewrap), "none" (no sandbox; `Isolation()`), "account" (root, no sandbox, a learner
account), and "userns" (bubblewrap as an ordinary user: run under `setpriv` as nobody).
Nothing here signals a process it did not start: a leftover found is one a cell of this file
started, killed by its exact id; a probe of another process sends signal 0 only.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from lessonkit.grade.channel import reported
from lessonkit.grade.channel.child_handle import ChildHandle, grading_starter
from lessonkit.run.forking import forks_children
from lessonkit.run.isolation import Isolation, root_isolation
from lessonkit.run.limits import DEFAULT_LIMITS, Limits

from conftest import REPO, one_cell_request, session_starter

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not forks_children(), reason="learner children are not forks here"),
]


def run_together(
    isolation: Isolation,
    sources: list[str],
    *,
    budget: float = 15.0,
    starter=None,
    limits: Limits = DEFAULT_LIMITS,
    stopped_ok: bool = False,
) -> list[object]:
    """The `result` of each cell, all running at once in forks of one starter (as the files
    of `--batch --jobs N` do); the value, or the error text where the cell failed."""
    starter = starter or session_starter(isolation, limits)
    workers = [
        ChildHandle(trusted=False, isolation=isolation, limits=limits, starter=starter)
        for _ in sources
    ]
    requests = [one_cell_request(source, budget) for source in sources]
    try:
        for worker, request in zip(workers, requests, strict=True):
            assert worker.send(request)
        deadline = time.monotonic() + budget + 10
        records = [
            worker.collect(request, deadline, timeout=budget)
            for worker, request in zip(workers, requests, strict=True)
        ]
    finally:
        for worker in workers:
            worker.close()
    results: list[object] = []
    for record in records:
        if stopped_ok and record.stop_reason is not None:
            results.append(f"stopped: {record.stop_reason}")
            continue
        assert record.stop_reason is None, record.stop_reason
        (event,) = record.runs.values()
        if event.error is not None:
            results.append(f"error: {event.error}")
            continue
        value = event.values["result"]
        results.append(value.value if isinstance(value, reported.Text | reported.Number) else value)
    return results


def _with_marker(marker: str) -> list[int]:
    """Processes (seen from here, the test's PID namespace) whose command line has `marker`."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError):
                if marker.encode() in Path(f"/proc/{entry}/cmdline").read_bytes():
                    found.append(int(entry))
    return found


def _left_behind(marker: str) -> list[int]:
    """The processes a cell started with `marker` that are still there; they are ours (a
    cell of this file started them), so each is killed by its exact id once listed."""
    time.sleep(0.5)  # killed tasks take a moment to leave
    found = _with_marker(marker)
    for pid in found:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    return found


def _sleeper(marker: str, *, leave_session: bool) -> str:
    """A cell that starts `/bin/sleep MARKER` and returns at once; `leave_session`: through a
    double fork and setsid(), as a daemon would."""
    if leave_session:
        start = (
            "if os.fork() == 0:\n"
            "    os.setsid()\n"
            "    if os.fork() == 0:\n"
            f"        os.execv('/bin/sleep', ['/bin/sleep', '{marker}'])\n"
            "    os._exit(0)\n"
            "os.wait()\n"
        )
    else:
        start = f"if os.fork() == 0:\n    os.execv('/bin/sleep', ['/bin/sleep', '{marker}'])\n"
    return "import os\n" + start + "result = 'started'\n"


# ------------------------------------------------------------------ the starter and its forks


PRIVILEGE_PROBE = r"""
import ctypes, os, signal
seen = []
status = dict(line.split(':', 1) for line in open('/proc/self/status') if ':' in line)
seen.append('uid0' if os.getuid() == 0 else 'uid')
for key in ('CapPrm', 'CapEff', 'CapAmb', 'CapInh'):
    if int(status[key].strip(), 16):
        seen.append(key)
if status['NoNewPrivs'].strip() != '1':
    seen.append('new-privs')
if os.getppid() != 0:
    seen.append('parent-visible')
others = [p for p in os.listdir('/proc') if p.isdigit() and int(p) != os.getpid()]
if others:
    seen.append('processes:' + ','.join(others))
own = {int(t) for t in os.listdir('/proc/self/task')}  # its threads answer kill(tid, 0)
for pid in range(2, 200):
    if pid in own:
        continue
    try:
        os.kill(pid, 0)
        seen.append(f'signal:{pid}')
    except (ProcessLookupError, PermissionError):
        pass
for attempt in (lambda: os.setuid(0), lambda: os.setgid(0)):
    try:
        attempt()
        seen.append('setid')
    except OSError:
        pass
for path in ('/proc/sysrq-trigger', '/proc/sys/kernel/core_pattern', '/proc/sys/vm/drop_caches'):
    try:
        open(path, 'w').close()
        seen.append('writes:' + path)
    except OSError:
        pass
for folder in ('/', '/dev', '/dev/shm', '/dev/mqueue', '/run', '/var/tmp', '/usr'):
    if os.path.isdir(folder) and os.access(folder, os.W_OK):
        seen.append('writable:' + folder)
libc = ctypes.CDLL(None, use_errno=True)
if libc.mount(b'none', b'/usr', None, ctypes.c_ulong(0x20 | 0x1000), None) == 0:  # remount rw
    seen.append('remount')
result = ' '.join(seen)
"""


def test_a_fork_has_no_privilege_and_sees_no_other_process(sandbox):
    """Privileged: the starter keeps CAP_SETUID/SETGID/SYS_ADMIN; its fork must have none,
    see neither the starter nor a sibling, and name no process it could signal."""
    isolation = Isolation(sandbox)
    seen, _sibling = run_together(
        isolation, [PRIVILEGE_PROBE, "import time\ntime.sleep(3)\nresult = 1\n"]
    )
    assert seen == "uid", seen


DESCRIPTOR_PROBE = r"""
import os, stat
held = []
for name in sorted(os.listdir('/proc/self/fd'), key=int):
    fd = int(name)
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        continue  # the listing's own descriptor, closed already
    if stat.S_ISSOCK(mode):
        held.append(f'{fd}:socket')
    elif fd > 4:
        held.append(f'{fd}:{os.readlink(f"/proc/self/fd/{fd}")}')
result = ' '.join(held)
"""


def test_a_fork_holds_no_socket_and_no_descriptor_of_its_siblings(sandbox):
    """The starter's control socket, the greeting socket and the pipes of forks started
    before this one must all be closed before learner code runs."""
    isolation = Isolation(sandbox)
    seen = run_together(isolation, ["import time\ntime.sleep(2)\nresult = 1\n", DESCRIPTOR_PROBE])
    assert seen[1] == "", seen[1]


def test_no_process_of_a_fork_outlives_its_stop(sandbox):
    """A daemon (double fork, setsid) started by the cell must die with the fork: it is in
    the fork's PID namespace and cgroup."""
    marker = f"3{secrets.randbelow(10**6)}.{secrets.randbelow(10**6)}"
    (seen,) = run_together(Isolation(sandbox), [_sleeper(marker, leave_session=True)])
    assert seen == "started"
    assert _left_behind(marker) == []


def test_a_fork_runs_a_cell_without_a_sandbox():
    """ "none" mode: the parent waits for one greeting, so the fork must send one (it sent a
    second, met a closed socket and ended with status 70 before any cell ran)."""
    assert run_together(Isolation(), ["result = 1\n"]) == [1]


def test_a_fork_cannot_leave_a_process_behind_without_a_sandbox():
    """No sandbox (`Isolation()`, "none"): a child started from scratch is the leader of its
    own process group and `Child.stop` kills the group; a fork is stopped by pidfd alone.
    Its plain child (no setsid, which the docs admit escapes without a sandbox) must die
    with it, as it did before forks."""
    marker = f"4{secrets.randbelow(10**6)}.{secrets.randbelow(10**6)}"
    (seen,) = run_together(Isolation(), [_sleeper(marker, leave_session=False)])
    assert seen == "started"
    assert _left_behind(marker) == [], "a child of the fork outlived the file's grading"


NETWORK_SERVER = r"""
import socket
server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
server.bind(b'\0lessonkit-red-{tag}')
server.listen(1)
server.settimeout(8)
try:
    peer, _ = server.accept()
    peer.settimeout(5)
    result = 'got: ' + peer.recv(100).decode()
except OSError as exc:
    result = 'alone: ' + type(exc).__name__
"""

NETWORK_CLIENT = r"""
import socket, time
result = 'nobody answered'
for _ in range(60):
    try:
        client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        client.connect(b'\0lessonkit-red-{tag}')
        client.sendall(b'answers of the other file')
        result = 'sent'
        break
    except OSError:
        time.sleep(0.1)
"""


def test_sibling_forks_share_no_network_namespace(sandbox):
    """Two files of one batch graded at once (`--jobs 2`): a child started from scratch had
    a bubblewrap, so a network namespace, of its own; forks share the starter's, whose
    abstract Unix sockets (and loopback) reach one sibling from another."""
    tag = secrets.token_hex(4)
    server, client = run_together(
        Isolation(sandbox),
        [NETWORK_SERVER.replace("{tag}", tag), NETWORK_CLIENT.replace("{tag}", tag)],
    )
    assert not str(server).startswith("got:"), (server, client)
    assert client == "nobody answered", (server, client)


LOOPBACK_SERVER = r"""
import socket
server = socket.socket()
server.bind(('127.0.0.1', {port}))
server.listen(1)
server.settimeout(8)
try:
    peer, _ = server.accept()
    result = 'got: ' + peer.recv(100).decode()
except OSError as exc:
    result = 'alone: ' + type(exc).__name__
"""

LOOPBACK_CLIENT = r"""
import socket, time
result = 'nobody answered'
for _ in range(60):
    try:
        socket.create_connection(('127.0.0.1', {port}), timeout=1).sendall(b'over loopback')
        result = 'sent'
        break
    except OSError:
        time.sleep(0.1)
"""


def test_sibling_forks_cannot_meet_over_loopback(sandbox):
    port = str(20000 + secrets.randbelow(20000))
    server, client = run_together(
        Isolation(sandbox),
        [LOOPBACK_SERVER.replace("{port}", port), LOOPBACK_CLIENT.replace("{port}", port)],
    )
    assert not str(server).startswith("got:"), (server, client)


SYSV_OWNER = r"""
import ctypes, time
libc = ctypes.CDLL(None, use_errno=True)
key = {key}
ident = libc.shmget(key, 4096, 0o1666)  # IPC_CREAT | 0666
libc.shmat.restype = ctypes.c_void_p
address = libc.shmat(ident, None, 0)
ctypes.memmove(address, b'secret of file A', 16)
time.sleep(4)
result = 'made'
"""

SYSV_READER = r"""
import ctypes, time
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
result = 'nothing'
for _ in range(30):
    ident = libc.shmget({key}, 0, 0)
    if ident >= 0:
        address = libc.shmat(ident, None, 0)
        result = ctypes.string_at(address, 16).decode()
        break
    time.sleep(0.1)
"""


def test_sibling_forks_share_no_ipc(sandbox):
    """Each fork unshares the IPC namespace: System V shared memory made by one file is not
    found by another graded at the same time."""
    key = str(0x1E550000 + secrets.randbelow(0xFFFF))
    made, read = run_together(
        Isolation(sandbox), [SYSV_OWNER.replace("{key}", key), SYSV_READER.replace("{key}", key)]
    )
    assert made == "made"
    assert read == "nothing", read


def test_a_fork_cannot_change_what_the_next_fork_inherits(sandbox):
    """Fork-time state (the imported JAX, NumPy, json) is the starter's: a patch made in
    one fork must not reach the next one."""
    isolation = Isolation(sandbox)
    patch = (
        "import json, jax, jax.numpy as jnp, numpy\n"
        "jnp.sum = lambda *a, **k: 42\n"
        "numpy.allclose = lambda *a, **k: True\n"
        "json.dumps = lambda *a, **k: '{}'\n"
        "jax.config.update('jax_enable_x64', True)\n"
        "result = 'patched'\n"
    )
    check = (
        "import jax, jax.numpy as jnp, numpy\n"
        "result = f'{int(jnp.sum(jnp.arange(3)))} {numpy.allclose(1.0, 2.0)} '"
        " + str(jax.config.jax_enable_x64)\n"
    )
    (first,) = run_together(isolation, [patch])
    assert first == "patched"
    (second,) = run_together(isolation, [check])
    assert second == "3 False False", second


@pytest.fixture
def cache_folder():
    """A folder outside /tmp: a fork's private /tmp hides any cache under /tmp."""
    if not os.path.isdir("/var/tmp"):
        pytest.skip("no /var/tmp")
    folder = Path(tempfile.mkdtemp(prefix="lessonkit-red-", dir="/var/tmp"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_a_fork_cannot_write_the_compile_cache(sandbox, cache_folder):
    """The starter is given the compile cache (read-only); its fork must not write it, not
    even as root in a user namespace of its own."""
    cache = cache_folder / "cache"
    cache.mkdir()
    (cache / "entry").write_bytes(b"trusted")
    os.chmod(cache, 0o777)  # even where the permissions allow it, the mount must not
    probe = (
        "import ctypes, os\n"
        "written = []\n"
        "folder = os.environ.get('JAX_COMPILATION_CACHE_DIR', '')\n"
        "try:\n"
        "    written.append('sees:' + open(os.path.join(folder, 'entry'), 'rb').read().decode())\n"
        "except OSError as exc:\n"
        "    written.append('sees-nothing:' + type(exc).__name__)\n"
        "def attempt(tag):\n"
        "    for name in ('entry', 'new'):\n"
        "        try:\n"
        "            with open(os.path.join(folder, name), 'wb') as file:\n"
        "                file.write(b'poisoned')\n"
        "            written.append(tag + name)\n"
        "        except OSError:\n"
        "            pass\n"
        "attempt('')\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "if libc.unshare(0x10000000 | 0x00020000) == 0:\n"
        "    libc.mount(b'none', folder.encode(), None, ctypes.c_ulong(0x20 | 0x1000), None)\n"
        "    attempt('userns:')\n"
        "result = (folder != '') and ' '.join(written) or 'no cache'\n"
    )
    isolation = Isolation(sandbox, cache=cache)
    starter = grading_starter(isolation, DEFAULT_LIMITS)
    try:
        (seen,) = run_together(isolation, [probe], starter=starter)
    finally:
        starter.close()
    # What the fork wrote may land in its own /tmp (a cache under /tmp is hidden by the
    # fork's private /tmp); what counts is that the real folder is unchanged.
    assert (cache / "entry").read_bytes() == b"trusted", seen
    assert not (cache / "new").exists(), seen
    assert seen == "sees:trusted", seen


MiB = 2**20

SHARED_MEMORY = r"""
import mmap
size = {size}
seen = []
try:
    private = bytearray(size)  # counted by RLIMIT_DATA: refused
    seen.append('private')
except MemoryError:
    seen.append('no-private')
shared = mmap.mmap(-1, size, flags=mmap.MAP_SHARED | mmap.MAP_ANONYMOUS)
for offset in range(0, size, 4096):
    shared[offset] = 1
seen.append('shared')
result = ' '.join(seen)
"""


@pytest.mark.parametrize("mode", ["privileged", "own-root"])
def test_shared_memory_counts_against_the_memory_limit(mode, sandbox):
    """RLIMIT_DATA counts private writable memory only: a shared anonymous mapping (or a
    memfd, or a tmpfs in a user namespace of its own) is not counted. The cgroup (root,
    cgroup v1) counts it, in the sandbox and, since issue 59, for a root grader's child
    without one (on 15ef63c a strict xfail: no cgroup there, 1280 MiB filled)."""
    limits = DEFAULT_LIMITS.with_options(memory=512 * MiB)
    size = limits.memory + limits.cgroup_margin + 256 * MiB  # past the cgroup, too
    isolation = Isolation(sandbox) if mode == "privileged" else _as_root("namespaces")
    (seen,) = run_together(
        isolation,
        [SHARED_MEMORY.replace("{size}", str(size))],
        limits=limits,
        stopped_ok=True,
    )
    assert seen != "no-private shared", f"{size // MiB} MiB filled under a {512} MiB limit"
    assert "killed" in str(seen), seen  # the cgroup killed it: the learner is told so


CGROUP_ESCAPE = r"""
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
seen = []
uid, gid = os.getuid(), os.getgid()
libc.prctl(4, 1, 0, 0, 0)  # dumpable again: its own /proc/self maps are then its own
if libc.unshare(0x10000000 | 0x00020000 | 0x02000000) != 0:  # user, mount, cgroup
    seen.append('no-userns')
else:
    open('/proc/self/setgroups', 'w').write('deny')
    open('/proc/self/uid_map', 'w').write(f'0 {uid} 1')
    open('/proc/self/gid_map', 'w').write(f'0 {gid} 1')
    for controller in ('memory', 'pids'):
        target = f'/tmp/{controller}'
        os.makedirs(target, exist_ok=True)
        if libc.mount(b'cgroup', target.encode(), b'cgroup', 0, controller.encode()) != 0:
            continue
        seen.append('mounted-' + controller)
        for name, value in (('memory.limit_in_bytes', '-1'), ('pids.max', 'max')):
            try:
                with open(os.path.join(target, name), 'w') as file:
                    file.write(value)
                seen.append('raised-' + name)
            except OSError:
                pass
        try:
            with open(os.path.join(target, 'escape'), 'w'):
                pass
        except OSError:
            pass
        try:
            os.mkdir(os.path.join(target, 'child'))
            seen.append('made-child-' + controller)
        except OSError:
            pass
result = ' '.join(seen)
"""


def test_a_fork_cannot_raise_its_cgroup_limits(sandbox):
    """Privileged: a cell becomes root of a user namespace of its own, with a cgroup
    namespace, mounts the v1 hierarchies and tries to lift its memory and task caps."""
    (seen,) = run_together(Isolation(sandbox), [CGROUP_ESCAPE])
    assert "raised" not in str(seen), seen


# ---------------------------------------------- root without a sandbox (a gVisor pod, a container)


def _as_root(kind: str) -> Isolation:
    """The isolation of a root grader without bubblewrap, of `kind` (`namespaces` where the
    kernel allows them, else `user`); skipped where it cannot be tried here."""
    if os.geteuid() != 0:
        pytest.skip("a root grader's isolation needs root")
    if kind == "namespaces" and root_isolation() != "namespaces":
        pytest.skip("the kernel refuses namespaces here")
    if kind == "user" and not _readable_by_anyone(Path(sys.base_prefix)):
        pytest.skip(f"this Python ({sys.base_prefix}) lies in a folder only root may enter")
    return Isolation(as_root=kind)


def _readable_by_anyone(path: Path) -> bool:
    """Whether a user with no rights of its own can read `path` (each folder on the way)."""
    return all(os.stat(f).st_mode & 0o005 == 0o005 for f in [path, *path.parents] if f.exists())


SIGNAL_PROBE = r"""
import os, time
time.sleep(1.5)  # the sibling is running by now
me = os.getuid()
reached = []
for entry in os.listdir('/proc'):
    if not entry.isdigit() or int(entry) == os.getpid():
        continue
    try:
        command = open(f'/proc/{entry}/cmdline', 'rb').read()
        owner = os.stat(f'/proc/{entry}').st_uid
    except OSError:
        continue
    if b'--starter' not in command:
        continue  # only the grading starter and its forks: nothing else is signalled
    try:
        os.kill(int(entry), 0)  # signal 0: a permission check, nothing is delivered
        reached.append('signal-' + ('starter' if owner == 0 else 'sibling'))
    except OSError:
        pass
    for what in ('fd/0', 'environ', 'mem'):
        try:
            open(f'/proc/{entry}/{what}', 'rb').close()
            reached.append(what)
        except OSError:
            pass
home = os.environ['HOME']
parent = os.path.dirname(home)
for entry in os.listdir(parent):
    folder = os.path.join(parent, entry)
    if folder == home:
        continue
    try:
        if 'answer-{tag}' in os.listdir(folder):  # the sibling's scratch: read its file
            open(os.path.join(folder, 'answer-{tag}')).read()
            reached.append('sibling-scratch')
    except OSError:
        pass
result = ' '.join(sorted(set(reached)))
"""

ACCOUNT_SIBLING = r"""
import os, time
open(os.path.join(os.environ['HOME'], 'answer-{tag}'), 'w').write('my work')
time.sleep(4)
result = 'alive'
"""


@pytest.mark.parametrize("kind", ["namespaces", "user"])
def test_without_a_sandbox_a_fork_reaches_neither_starter_nor_sibling(kind):
    """Root without bubblewrap (a gVisor pod, an autograder container): each fork becomes a
    user id of its own while the starter stays root, with (`namespaces`) or without
    (`user`) its own namespaces and root. A file must not signal the starter or another
    file's child graded at the same time, nor read its request, memory or scratch folder.
    On 15ef63c every fork became the one learner account and this reached the sibling."""
    isolation = _as_root(kind)
    tag = secrets.token_hex(4)
    seen, sibling = run_together(
        isolation,
        [SIGNAL_PROBE.replace("{tag}", tag), ACCOUNT_SIBLING.replace("{tag}", tag)],
    )
    assert sibling == "alive"
    assert seen == "", seen


# ------------------------------------------------- the userns mode (bubblewrap as a user)

USERNS_SCRIPT = r"""
import json, sys
sys.path.insert(0, {tests!r})
from lessonkit.run.isolation import Isolation
from lessonkit.run.sandbox import find_sandbox
from hostile.test_starter_attacks import run_together
found, reason = find_sandbox()
if found is None or found.privileged:
    print('SKIP', reason)
    raise SystemExit(0)
for sources in json.loads({batches!r}):
    print('RESULT', json.dumps(run_together(Isolation(found), sources)))
"""

USERNS_PROBE = r"""
import os, signal, time
time.sleep(1.5)
reached = []
me = os.readlink('/proc/self')  # its id in the sandbox's /proc, which it keeps
for entry in os.listdir('/proc'):
    if not entry.isdigit() or entry == me:
        continue
    for what in ('mem', 'environ', 'fd/0', 'root/tmp', 'cwd'):
        try:
            path = f'/proc/{entry}/{what}'
            os.listdir(path) if what in ('root/tmp', 'cwd') else open(path, 'rb').close()
            reached.append(f'{entry}:{what}')
        except OSError:
            pass
    try:  # a /proc/PID folder is a process descriptor too; signal 0 delivers nothing
        handle = os.open(f'/proc/{entry}', os.O_RDONLY | os.O_DIRECTORY)
        signal.pidfd_send_signal(handle, 0)
        reached.append(f'{entry}:pidfd-signal')
    except OSError:
        pass
result = ' '.join(reached)
"""


USERNS_LISTING = r"""
import os, time
time.sleep(1.5)
names = []
for entry in sorted((p for p in os.listdir('/proc') if p.isdigit()), key=int):
    try:
        status = dict(l.split(':', 1) for l in open(f'/proc/{entry}/status') if ':' in l)
        names.append(f"{entry}:{status['Name'].strip()}:{status['Uid'].split()[0]}")
    except OSError:
        pass
result = ' '.join(names)
"""


def as_nobody_in_userns(batches: list[list[str]]) -> list[list[object]]:
    """`run_together` of each batch in the "userns" mode: run as nobody (root here, so the
    interpreter's installation is bound where nobody can read it, in a mount namespace of
    the command's own)."""
    if os.geteuid() != 0 or not shutil.which("setpriv") or not shutil.which("unshare"):
        pytest.skip("needs root to become nobody")
    script = USERNS_SCRIPT.format(tests=str(REPO / "tests"), batches=json.dumps(batches))
    real = os.path.realpath(sys.executable)
    prefix = str(Path(real).parents[1])  # the interpreter's installation, maybe under /root
    wrapper = (
        "set -e\n"
        'if [ ! -x "$PY" ] || ! setpriv --reuid=65534 --regid=65534 --clear-groups '
        'test -x "$PY"; then\n'
        '  mkdir -p "$HIDE"; mount --bind "$PREFIX" "$HIDE"\n'
        '  mount -t tmpfs -o mode=755 tmpfs "$TOP"; mkdir -p "$PREFIX"\n'
        '  mount --bind "$HIDE" "$PREFIX"\n'
        "fi\n"
        'for path in "$PY" "$SOURCE"; do\n'
        '  if ! setpriv --reuid=65534 --regid=65534 --clear-groups test -r "$path"; then\n'
        '    echo "SKIP $path lies in a folder only root may enter (a clone in a 0700'
        ' temporary folder), so nobody cannot run it"; exit 0\n'
        "  fi\n"
        "done\n"
        "exec setpriv --reuid=65534 --regid=65534 --clear-groups "
        'env HOME=/tmp PYTHONPATH="$PYTHONPATH" "$PY" -c "$SCRIPT"\n'
    )
    hide = f"/tmp/lessonkit-red-{secrets.token_hex(4)}"
    env = {
        "PY": sys.executable,
        "PREFIX": prefix,
        "TOP": "/" + Path(prefix).parts[1],
        "HIDE": hide,
        "SOURCE": str(REPO / "src" / "lessonkit" / "__init__.py"),
        "SCRIPT": script,
        "PYTHONPATH": os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")]),
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
    }
    try:
        done = subprocess.run(
            ["unshare", "-m", "--propagation", "private", "sh", "-c", wrapper],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    finally:
        with contextlib.suppress(OSError):
            os.rmdir(hide)
    lines = [line for line in done.stdout.splitlines() if line.startswith(("RESULT", "SKIP"))]
    assert lines, (done.returncode, done.stdout[-2000:], done.stderr[-2000:])
    if lines[0].startswith("SKIP"):
        pytest.skip(lines[0])
    return [json.loads(line.removeprefix("RESULT ")) for line in lines]


def test_userns_a_fork_reads_no_other_process_of_its_user():
    """Bubblewrap as an ordinary user ("userns"): the starter, its forks and the middle
    process each fork leaves (dumpable, to write its user maps) are all the same user, and
    the fork keeps the sandbox's /proc, which names them all (the listing shows they are
    there); reading their memory, descriptors or files must fail."""
    alive = "import time\ntime.sleep(4)\nresult = 'alive'\n"
    probe, listing = as_nobody_in_userns([[USERNS_PROBE, alive], [USERNS_LISTING, alive]])
    assert len(listing[0].split()) >= 5, listing  # bwrap, starter, two forks and a middle
    assert probe == ["", "alive"], (probe, listing)


def test_userns_sibling_forks_share_no_network_namespace():
    tag = secrets.token_hex(4)
    ((server, client),) = as_nobody_in_userns(
        [[NETWORK_SERVER.replace("{tag}", tag), NETWORK_CLIENT.replace("{tag}", tag)]]
    )
    assert not str(server).startswith("got:"), (server, client)
