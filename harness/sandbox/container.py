"""Container sandbox: jobs run in containers through the Docker Engine API.

The same code drives Docker on a user's machine and Podman's Docker-compatible service
(``podman system service --time=0 unix://PATH``) here; the engine is found through
``DOCKER_HOST`` or the default socket.

Workers, not one container per job (docs/performance.md, "Warm container exec": on Podman
4.3.1 a no-op job costs about 91 ms through a warm worker, 590 ms with one container per
job): the sandbox keeps one long-lived worker container per parallel slot, created with

- no network (``network_mode=none``), a read-only root filesystem,
- one writable bind mount, the worker's scratch root (``/scratch``); each job gets its
  own ``/scratch/job-<id>`` as working directory, ``HOME`` and ``TMPDIR``, removed after
  the job,
- memory (no swap), CPU and pids limits from :class:`~harness.sandbox.Limits`,

and ``exec``-s each job into it as user ``nobody`` (so the root-owned scratch root and
tmpfs mounts are not writable: the job directory is the only place it can write). A job
is wrapped by ``/bin/sh`` so that, when it ends,
its CPU time is read from the shell's ``times`` and every process it left behind is
killed (``kill -9 -1``: all but the worker's PID 1). At the wall-time or output limit the
worker is killed and replaced; an exit status of 137 that is not ours is a memory kill
(``memout``: on cgroup v1 Podman reports OOM as 137 with ``OOMKilled`` false). Workers
are removed at the end of a run, on Ctrl-C and on errors (``close``/context manager) and
carry the label ``verikit.worker`` and their owner's host:PID, so that
:func:`remove_orphan_workers` (run by every new sandbox) removes what a run killed with
SIGKILL left behind. Such a run's workers do not keep running meanwhile: a worker's main
process watches a heartbeat file the kit touches every second (``WATCH``) and ends the
container ``STALE_S`` seconds after the kit stopped touching it.

Rootless engines (Podman's service run by a non-root user, rootless Docker) work the same
way: the engine's root is that user and ``nobody`` one of the user's subordinate uids, so
a job still cannot write the scratch root. Two things differ. The kit cannot delete what
a job made inside directories of its own (they belong to that subordinate uid): the
container's root removes such leftovers (:func:`_remove_tree`). And an engine without
cgroup delegation (rootless on cgroup v1, or v2 without delegated controllers) enforces
no memory, CPU or pids limit: :func:`engine_isolation` detects it, workers are then made
without those limits, and :attr:`ContainerSandbox.isolation` records what was enforced.
"""

from __future__ import annotations

import os
import queue
import socket
import re
import shutil
import tempfile
import threading
import time
import uuid
from pathlib import Path

from ..model import Limits, ProcResult
from .base import Sandbox, SandboxError, collect_files, write_files
from .engine import EngineUnavailable, connect, engine_hint, engine_reachable  # noqa: F401  (the sandbox's engine)

LABEL = "verikit.worker"
OWNER = f"{socket.gethostname()}:{os.getpid()}"  # lets a later run remove a killed run's workers
JOB_USER = "65534:65534"  # nobody: cannot write the worker's root-owned mounts
SCRATCH = "/scratch"
TIMES_FILE = ".verikit-times"
# "$@" runs the job; `times` prints the shell's and its children's user/system CPU time.
WRAPPER = ('"$@"; rc=$?; times > ' + TIMES_FILE + '; kill -9 -1 2>/dev/null; exit $rc')
#: The kit touches each worker's ``/scratch/.alive`` every ``BEAT_S`` seconds; the worker's
#: main process exits (and the engine then kills every process in the container) once the
#: file is ``STALE_S`` seconds old, i.e. a few seconds after the kit died, even by SIGKILL.
#: ``/scratch`` is root-owned: a job (nobody) cannot keep its worker alive.
ALIVE = ".alive"
BEAT_S = 1.0
STALE_S = 5
WATCH = (f'while sleep 1; do t=$(stat -c %Y {SCRATCH}/{ALIVE} 2>/dev/null) || exit 0; '
         f'[ $(( $(date +%s) - t )) -lt {STALE_S} ] || exit 0; done')


def engine_isolation(client) -> dict[str, str]:
    """What the engine enforces on a worker: no network and a read-only root always;
    memory, CPU and pids limits (``"cgroup"``) unless the engine cannot set them
    (``"none"``). Podman says so in ``/libpod/info``: the cgroup controllers it may use
    (none for a rootless service on cgroup v1 or without delegation). Docker: rootless
    (``SecurityOptions``) without cgroup v2 memory and pids support (``/info``)."""
    try:
        lib = client.api._result(client.api._get(client.api._url("/libpod/info")), json=True)
        limits = {"memory", "pids", "cpu"} <= set(lib["host"]["cgroupControllers"] or ())
    except Exception:  # not Podman: Docker's /info
        try:
            info = client.info()
        except Exception:  # an engine that does not say: assume a rootful one
            info = {}
        rootless = any("rootless" in str(o) for o in info.get("SecurityOptions") or [])
        limits = not rootless or (str(info.get("CgroupVersion")) == "2" and info.get("MemoryLimit") is not False
                                  and info.get("PidsLimit") is not False)
    how = "cgroup" if limits else "none"
    return {"network": "none", "root": "read-only", "memory": how, "cpus": how, "pids": how}


def _remove_tree(path: Path, client=None, image: str | None = None) -> None:
    """Remove ``path``; what the kit cannot remove itself (a rootless engine's job made
    directories of its own: they belong to a subordinate uid) is removed by the root of a
    throwaway container of ``image`` (the engine's user, who owns those uids)."""
    shutil.rmtree(path, ignore_errors=True)
    if not path.exists() or client is None or image is None:
        return
    try:
        c = client.containers.run(image, ["find", "/w", "-mindepth", "1", "-delete"], detach=True, user="0:0",
                                  network_mode="none", volumes={str(path): {"bind": "/w", "mode": "rw"}},
                                  labels={"verikit.cleanup": "1"})
        try:
            c.wait(timeout=120)
        finally:
            c.remove(force=True)
    except Exception:  # best effort: what is left is in the host's temporary directory
        pass
    shutil.rmtree(path, ignore_errors=True)


def _parse_times(text: str) -> float:
    """CPU seconds of the children from POSIX ``times`` output (second line: user sys)."""
    lines = text.strip().splitlines()
    if len(lines) < 2:
        return 0.0
    total = 0.0
    for m, s in re.findall(r"(\d+)m([\d.]+)s", lines[1]):
        total += int(m) * 60 + float(s)
    return total


class _Worker:
    def __init__(self, client, image: str, limits: Limits, run_id: str, cgroup: bool = True):
        self.client, self.image = client, image
        self.dir = Path(tempfile.mkdtemp(prefix="verikit-worker-"))
        for sub in ("scratch", "empty", "empty-var"):
            (self.dir / sub).mkdir()
            (self.dir / sub).chmod(0o755)  # root-owned: a job (nobody) can enter, not write
        self.scratch = self.dir / "scratch"
        self.alive = self.scratch / ALIVE
        self.alive.touch()
        self.limits = limits
        # no cgroup delegation (rootless on cgroup v1): the engine would ignore the limits
        caps = dict(mem_limit=f"{limits.mem_mb}m", memswap_limit=f"{limits.mem_mb}m",
                    nano_cpus=int(limits.cpus * 1e9), pids_limit=1024) if cgroup else {}
        try:
            self.container = client.containers.run(
                image, ["sh", "-c", WATCH], detach=True, network_mode="none", read_only=True, **caps,
                # /tmp and /var/tmp: an empty read-only directory instead of the engine's
                # writable tmpfs (Podman makes those 1777 whatever the mode asked);
                # /dev/shm root-only. Jobs run as nobody: their job directory is the only
                # place they can write (TMPDIR points into it).
                volumes={str(self.dir / "scratch"): {"bind": SCRATCH, "mode": "rw"},
                         str(self.dir / "empty"): {"bind": "/tmp", "mode": "ro"},
                         str(self.dir / "empty-var"): {"bind": "/var/tmp", "mode": "ro"}},
                tmpfs={"/dev/shm": "rw,mode=755,size=1m"},
                labels={LABEL: "1", "verikit.run": run_id, "verikit.owner": OWNER},
                init=True,  # a real init as PID 1 reaps the zombies that killed jobs leave
            )
        except Exception as exc:
            shutil.rmtree(self.dir, ignore_errors=True)
            raise SandboxError(f"cannot start a worker from image {image}: {exc}") from exc

    def kill(self) -> None:
        try:
            self.container.kill()
        except Exception:
            pass

    def remove(self) -> None:
        try:
            self.container.remove(force=True)
        except Exception:
            pass
        _remove_tree(self.dir, self.client, self.image)


class ContainerSandbox(Sandbox):
    """Runs jobs in warm worker containers of one image.

    Args:
        image: image reference (e.g. ``verikit/framac:debian-<fp>``).
        slots: number of workers (= parallel jobs).
        base_url: engine address (default ``DOCKER_HOST`` or the default socket).

    Attributes:
        name: ``"container"``.
        image: the image reference.
        image_digest: the image ID (``sha256:...``) as the engine reports it.
        isolation: what the engine enforces on a job (:func:`engine_isolation`).

    Raises:
        EngineUnavailable: no engine answers.
        SandboxError: the image does not exist (message says how to build it).
    """

    name = "container"
    image_kind = "engine"

    @classmethod
    def create(cls, *, toolchain: str | None = None, slots: int = 1, image: str | None = None) -> "ContainerSandbox":
        """Warm workers of ``image``, else of ``toolchain``'s current Debian image
        (:func:`harness.sandbox.images.resolve`). Raises as the class."""
        from .images.engine import resolve

        return cls(image or resolve(toolchain), slots=slots)

    @classmethod
    def derived_image(cls, spec: dict) -> str | None:
        """The tag of the derived image ``spec`` in the engine.

        Raises:
            SandboxError: not built (says how), or no engine (with the spec's ``base_hint``).
        """
        from .images.engine import resolve_derived

        try:
            return resolve_derived(spec)
        except EngineUnavailable as exc:
            raise SandboxError(f"{exc}" + (f"\n{spec['base_hint']}" if spec.get("base_hint") else "")) from None

    def __init__(self, image: str, *, slots: int = 1, base_url: str | None = None):
        self.client = connect(base_url)
        try:
            img = self.client.images.get(image)
        except Exception as exc:
            raise SandboxError(f"image {image} not found in the engine; build it with "
                               f"'verikit images build {image.split('/')[-1].split(':')[0]}'") from exc
        remove_orphan_workers(self.client)
        self.image = image
        self.image_digest = img.id
        self.labels = img.labels or {}
        #: what the engine enforces (:func:`engine_isolation`), recorded with the probed toolchain
        self.isolation = engine_isolation(self.client)
        self.slots = max(1, slots)
        self.run_id = uuid.uuid4().hex[:12]
        self._idle: queue.Queue[_Worker] = queue.Queue()
        self._all: set[_Worker] = set()
        self._lock = threading.Lock()
        #: signalled when a worker goes idle or a slot frees (a worker removed): a job waiting
        #: in _acquire takes the worker or starts a new one
        self._freed = threading.Condition(self._lock)
        self._starting = 0  # slots reserved by workers being started
        self._busy: set[_Worker] = set()
        self.recycled = 0
        self._closed = threading.Event()
        threading.Thread(target=self._heartbeat, daemon=True, name="verikit-heartbeat").start()

    def _heartbeat(self) -> None:
        """Touch every worker's ``.alive`` file each ``BEAT_S`` seconds until closed."""
        while not self._closed.wait(BEAT_S):
            with self._lock:
                workers = list(self._all)
            for w in workers:
                try:
                    os.utime(w.alive)
                except OSError:  # removed meanwhile
                    pass

    # ------------------------------------------------------------------ workers
    def _acquire(self, limits: Limits) -> _Worker:
        """An idle worker, or a new one while fewer than ``slots`` exist; else wait until a
        job releases its worker or a broken worker is removed (its slot is free again)."""
        with self._freed:
            while True:
                try:
                    w = self._idle.get_nowait()
                    break
                except queue.Empty:
                    pass
                if len(self._all) + self._starting < self.slots:
                    w = None
                    self._starting += 1
                    break
                self._freed.wait()
        if w is not None and (w.limits.mem_mb, w.limits.cpus) != (limits.mem_mb, limits.cpus):
            # memory and CPUs are the worker's cgroup: a job with other ones needs another worker
            w.remove()
            with self._freed:
                self._all.discard(w)
                self._starting += 1  # its slot is this job's new worker's
            w = None
        if w is None:
            try:
                w = _Worker(self.client, self.image, limits, self.run_id, cgroup=self.isolation["memory"] == "cgroup")
            finally:
                with self._freed:
                    self._starting -= 1
                    if w is not None:
                        self._all.add(w)
                    self._freed.notify_all()
        with self._lock:
            self._busy.add(w)
        return w

    def _release(self, w: _Worker, broken: bool) -> None:
        with self._lock:
            self._busy.discard(w)
        if broken:
            self._discard(w)
            self.recycled += 1
        else:
            with self._freed:
                self._idle.put(w)
                self._freed.notify_all()

    def _discard(self, w: _Worker) -> None:
        w.remove()
        with self._freed:
            self._all.discard(w)
            self._freed.notify_all()

    def cancel(self) -> None:
        """Kill the workers that are running jobs (Ctrl-C); they are replaced if reused."""
        with self._lock:
            busy = list(self._busy)
        for w in busy:
            w.kill()

    def close(self) -> None:
        """Remove every worker of this sandbox (idempotent)."""
        self._closed.set()
        with self._lock:
            workers = list(self._all)
            self._all.clear()
        for w in workers:
            w.remove()
        while not self._idle.empty():
            self._idle.get_nowait()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def read_file(self, path: str) -> bytes | None:
        """Read a file of the image (e.g. ``/etc/verikit/toolchain.json``) in a worker;
        None when it does not exist."""
        res = self.run(["cat", path], limits=Limits(wall_s=60, output_bytes=1 << 20))
        return res.stdout.encode() if res.returncode == 0 else None

    # ------------------------------------------------------------------ jobs
    def run(self, argv: list[str], *, files: dict[str, str | bytes] | None = None, limits: Limits = Limits(),
            collect: list[str] | tuple[str, ...] = (), env: dict[str, str] | None = None) -> ProcResult:
        """Run ``argv`` in a worker, in a fresh ``/scratch/job-<id>`` holding ``files``.

        Same contract as :meth:`harness.sandbox.local.HostSandbox.run`. ``max_rss_mb`` is
        not measured per job here (0.0); ``cpu_s`` comes from the shell's ``times``.
        """
        w = self._acquire(limits)
        job = f"job-{uuid.uuid4().hex[:12]}"
        host_dir, cdir = w.scratch / job, f"{SCRATCH}/{job}"
        broken = False
        try:
            host_dir.mkdir()
            (host_dir / "tmp").mkdir()
            write_files(host_dir, files)
            for dirpath, dirnames, filenames in os.walk(host_dir):  # the job runs as nobody
                os.chmod(dirpath, 0o777)
                for f in filenames:
                    os.chmod(os.path.join(dirpath, f), 0o666)
            run_env = {"HOME": cdir, "TMPDIR": f"{cdir}/tmp", "PWD": cdir, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
                       "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", **(env or {})}
            result, broken = self._exec(w, ["/bin/sh", "-c", WRAPPER, "sh", *argv], cdir, run_env, limits)
            result.argv = list(argv)
            times = host_dir / TIMES_FILE
            if times.exists():
                result.cpu_s = _parse_times(times.read_text())
            result.files.update(collect_files(host_dir, collect))
            return result
        except ValueError:  # a bad path from the caller: the worker is fine
            raise
        except SandboxError:
            broken = True
            raise
        except Exception as exc:
            broken = True
            raise SandboxError(f"container job failed on our side: {type(exc).__name__}: {exc}") from exc
        finally:
            shutil.rmtree(host_dir, ignore_errors=True)
            if host_dir.exists() and not broken:  # rootless: directories the job made are not ours
                self._remove_as_root(w, cdir)
            self._release(w, broken)

    def _remove_as_root(self, w: _Worker, cdir: str) -> None:
        """Remove the job directory ``cdir`` as the worker's root (a rootless engine's job
        made directories the kit cannot delete: they belong to a subordinate uid)."""
        try:
            exec_id = self.client.api.exec_create(w.container.id, ["rm", "-rf", cdir], user="0:0")["Id"]
            self.client.api.exec_start(exec_id)
        except Exception:  # the worker is then replaced, and its directory removed with it
            pass

    def _exec(self, w: _Worker, cmd: list[str], workdir: str, env: dict, limits: Limits) -> tuple[ProcResult, bool]:
        api = self.client.api
        state = {"timed_out": False, "truncated": False}
        t0 = time.monotonic()
        exec_id = api.exec_create(w.container.id, cmd, workdir=workdir, environment=env, user=JOB_USER)["Id"]
        timer = threading.Timer(limits.wall_s, lambda: (state.__setitem__("timed_out", True), w.kill()))
        timer.daemon = True
        timer.start()
        out, err = bytearray(), bytearray()
        try:
            for chunk_out, chunk_err in api.exec_start(exec_id, stream=True, demux=True):
                if chunk_out:
                    out += chunk_out
                if chunk_err:
                    err += chunk_err
                if len(out) > limits.output_bytes or len(err) > limits.output_bytes:
                    state["truncated"] = True
                    w.kill()
                    break
        except Exception:
            if not (state["timed_out"] or state["truncated"]):
                raise
        finally:
            timer.cancel()
        wall = time.monotonic() - t0
        try:
            code = api.exec_inspect(exec_id).get("ExitCode")
        except Exception:
            code = None
        killed_by_us = state["timed_out"] or state["truncated"]
        if not killed_by_us and code in (137, None):
            # 137 is either the OOM killer inside a live worker (memout) or the worker itself
            # dying (crash, external kill): the latter is ours, an infra error to retry.
            try:
                w.container.reload()
                alive = w.container.status == "running"
            except Exception:
                alive = False
            if not alive:
                raise SandboxError(f"worker container {w.container.short_id} died during the job (exit {code})")
        memout = (code == 137 and not killed_by_us)
        if killed_by_us and code in (None, 0):
            code = -9
        result = ProcResult(
            argv=cmd, returncode=code, stdout=bytes(out[: limits.output_bytes]).decode("utf-8", "replace"),
            stderr=bytes(err[: limits.output_bytes]).decode("utf-8", "replace"), wall_s=wall,
            timed_out=state["timed_out"], memout=memout, output_truncated=state["truncated"],
        )
        if code == 127 and b"not found" in err:
            result.start_error = err.decode("utf-8", "replace").strip()[-300:]
            result.returncode = None
        return result, killed_by_us or memout


def list_workers(client, filters: dict | None = None, all: bool = True) -> list:
    """The engine's containers matching ``filters`` (default: every verikit worker), as
    docker-SDK ``Container`` objects, inspected.

    Unlike ``client.containers.list``, a container removed between the engine's listing
    and its inspection (another run's ``remove_orphan_workers``, a worker ending) is left
    out instead of failing the call. Podman answers that inspection with a 404 when the
    container is gone, and with a 500 "no such container" while its removal is under way,
    which the SDK's ``ignore_removed`` (404 only) does not cover. Other engine errors are
    raised as ``docker.errors.APIError``."""
    from docker.errors import APIError, NotFound

    found = []
    for row in client.containers.list(all=all, filters=filters or {"label": LABEL}, sparse=True):
        try:
            found.append(client.containers.get(row.id))
        except NotFound:
            continue
        except APIError as e:
            if "no such container" not in str(e.explanation or "").lower():
                raise
    return found


def remove_orphan_workers(client) -> int:
    """Remove workers whose owning process (on this host) is gone: what a run killed with
    SIGKILL could not remove itself. Returns how many were removed."""
    import psutil

    host = socket.gethostname()
    n = 0
    for c in list_workers(client):
        owner_host, _, pid = c.labels.get("verikit.owner", ":").rpartition(":")
        if owner_host == host and pid.isdigit() and not psutil.pid_exists(int(pid)):
            sources = [m.get("Source", "") for m in c.attrs.get("Mounts", [])]
            try:
                c.remove(force=True)
                n += 1
            except Exception:
                continue
            for src in sources:  # the worker's host directories (scratch, empty mounts)
                parent = Path(src).parent
                if parent.name.startswith("verikit-worker-") and parent.exists():
                    _remove_tree(parent, client, c.attrs.get("Image"))
    return n
