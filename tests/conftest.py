"""Shared fixtures of the verikit tests.

- The data mirror comes ONLY from ``VERIKIT_DATA_MIRRORS`` (CI: the absolute path of
  ../shared/data beside the checkout); fixtures that need it skip with a clear reason
  when it is unset or does not hold the CASP sample.
- ``VERIKIT_CACHE`` (result cache) and ``VERIKIT_DATA`` (data cache) always point at
  per-test (or per-session, for read-only data) temporary directories, so no test reads
  results cached by another test or by the user.
- Tests that verify run the real Frama-C installed here through ``HostSandbox``.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import pytest


#: Fixtures that run a real verifier (``realtool``: the session's result cache is filled by
#: real tool runs) or need the engine and images (``container``): a test using one is marked
#: so, whatever its own marks say, so that the inner loop (``nox -s quick``: not realtool,
#: container or slow) never starts a tool.
TOOL_FIXTURES = {"framac_host": "realtool", "shared_task_runs": "realtool", "shared_cache": "realtool",
                 "engine_image": "container"}


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Marks the tests that use a real tool's fixture (:data:`TOOL_FIXTURES`), then orders
    the longest test files first (``tests/durations.json``: seconds per file, refreshed by
    ``scripts/test_durations.py``; a file not listed counts 0), keeping the order within a
    file. With ``-n 2 --dist loadfile --no-loadscope-reorder`` the two workers take the
    files in this order, so a long file does not start last and leave one core idle."""
    import json

    for item in items:
        for name in sorted(set(getattr(item, "fixturenames", ())) & TOOL_FIXTURES.keys()):
            item.add_marker(getattr(pytest.mark, TOOL_FIXTURES[name]))
    weights = json.loads((Path(__file__).parent / "durations.json").read_text(encoding="utf-8"))
    items.sort(key=lambda item: -weights.get(item.nodeid.split("::")[0], 0))


def pytest_configure(config):
    """Tests that stop a kit run with SIGINT (Ctrl-C) need the kit to receive it: a test
    session started in the background by a shell without job control (``cmd &`` in a
    script) inherits SIGINT ignored, and its subprocesses would too, so the default
    disposition is restored here (in every xdist worker as well)."""
    import signal

    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)

CASP_SAMPLE = "casp-sample10"
CASP_PREFIX = ("github/AbdelbasetKABOU/CASP-LLM-Verification-Study/"
               "2dd260bfecc15e4a4614bdea2e3001021bf2d646")
CASP_TASK_IDS = ["00_327", "01_57", "02_12", "03_379", "04_140", "05_125", "06_114", "07_71", "08_377",
                 "09_52"]


def _mirror_root() -> Path | None:
    for entry in (os.environ.get("VERIKIT_DATA_MIRRORS") or "").split(os.pathsep):
        if entry and (Path(entry) / CASP_PREFIX / "framac_results.csv").is_file():
            return Path(entry).absolute()
    return None


@pytest.fixture(scope="session")
def casp_mirror() -> Path:
    """The mirror root (from ``VERIKIT_DATA_MIRRORS``) holding the casp-sample10 files."""
    raw = os.environ.get("VERIKIT_DATA_MIRRORS")
    if not raw:
        pytest.skip("VERIKIT_DATA_MIRRORS is not set: the real data mirror (../shared/data beside "
                    "the checkout) is needed for this test")
    root = _mirror_root()
    if root is None:
        pytest.skip(f"no mirror in VERIKIT_DATA_MIRRORS={raw!r} holds {CASP_PREFIX}")
    return root


@pytest.fixture(scope="session")
def casp_sample_dir(casp_mirror) -> Path:
    """``<mirror>/<layout prefix>`` of casp-sample10 (holds ``casp_10/<task>/...``)."""
    return casp_mirror / CASP_PREFIX


@pytest.fixture(scope="session")
def casp_fetched(casp_mirror, tmp_path_factory):
    """casp-sample10 fetched (read-only, from the mirror) with a throw-away data cache."""
    from harness import datasets

    return datasets.fetch(CASP_SAMPLE, data_dir=tmp_path_factory.mktemp("verikit-data"))


@pytest.fixture(scope="session")
def casp_tasks(casp_fetched) -> dict:
    """task_id -> :class:`harness.benchmarks.casp.Task` of casp-sample10."""
    from harness.benchmarks import casp

    return {t.task_id: t for t in casp.load_tasks(casp_fetched)}


def _session_dir(tmp_path_factory, name: str) -> Path:
    """A directory of the whole test session: under xdist, ONE for all workers (beside
    their base temporary directories), else a fresh one."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = tmp_path_factory.getbasetemp().parent / name
        shared.mkdir(exist_ok=True)
        return shared
    return tmp_path_factory.mktemp(name)


@pytest.fixture(scope="session")
def shared_cache(tmp_path_factory) -> Path:
    """A result cache shared by the tests whose subject is neither the cache nor a fresh
    tool run (CLI behaviour, reports, predictions, the Hub): a job several of them run
    (the canaries of a mode, the same gold) runs once per session. Every entry read is
    re-derived from its stored tool output by this kit's parser and judge (the executor),
    so a test still gets this kit's verdicts; a test that counts tool runs or edits the
    cache uses its own (``isolated_cache``). One cache for all workers (entries are
    written atomically)."""
    return _session_dir(tmp_path_factory, "shared-result-cache")


@pytest.fixture
def fresh_podman_storage() -> Path:
    """An empty Podman image store of the test's own (graphroot and runroot): the path of
    its ``storage.conf``, for ``CONTAINERS_STORAGE_CONF``. Removed after the test.

    It lies under a short directory of /tmp (``/tmp/vk-XXXXXXXX``), not under pytest's
    ``tmp_path``: with the store as deep as pytest's directories (79 characters here), every
    ``podman run`` of podman 4.3 waits out conmon's 20 s timeout before it returns ("Exceeded
    conmon timeout waiting for container to exit", libpod's ``WaitForExit``): 21 s per
    container against 1 s with the short path, measured here with ``true`` in the
    verikit-base image. A reviewer's or user's store (``/var/lib/containers/storage``) is short."""
    import tempfile

    root = Path(tempfile.mkdtemp(prefix="vk-", dir="/tmp"))
    conf = root / "storage.conf"
    conf.write_text(f'[storage]\ndriver = "overlay"\ngraphroot = "{root}/root"\nrunroot = "{root}/run"\n')
    yield conf
    # podman keeps the store's overlay directory mounted on itself (a private mount)
    import subprocess

    if (root / "root" / "overlay").is_dir():
        subprocess.run(["umount", "-l", str(root / "root" / "overlay")], capture_output=True)
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def isolated_cache(monkeypatch, tmp_path) -> dict:
    """Point ``VERIKIT_CACHE`` and ``VERIKIT_DATA`` at fresh directories of this test.

    Returns:
        An environment for subprocesses (``os.environ`` + the two variables, with the
        mirror kept from the caller's ``VERIKIT_DATA_MIRRORS``).
    """
    cache = tmp_path / "verikit-cache"
    data = tmp_path / "verikit-data"
    monkeypatch.setenv("VERIKIT_CACHE", str(cache))
    monkeypatch.setenv("VERIKIT_DATA", str(data))
    env = dict(os.environ)
    env["VERIKIT_CACHE"] = str(cache)
    env["VERIKIT_DATA"] = str(data)
    return env


@pytest.fixture
def shared_task_runs(framac_host, monkeypatch):
    """The test's own result caches keep their task runs (CASP's task-soundness run, about
    14 s per task here) in the session's result cache (``framac_host.cache_dir``, the
    ``shared_cache``), so a task's run is made once per session; their records stay their
    own. Not for tests whose subject is the task run or the count of tool runs."""
    from harness.results import ResultCache

    session = ResultCache(framac_host.cache_dir)
    get, put = ResultCache.get_task_run, ResultCache.put_task_run  # the cache's own, called on the session's
    monkeypatch.setattr(ResultCache, "get_task_run", lambda self, key: get(session, key))
    monkeypatch.setattr(ResultCache, "put_task_run", lambda self, key, proc: put(session, key, proc))
    yield


@dataclass
class FramaCHost:
    """The real Frama-C on this host: sandbox, probed toolchain, verifier, shared files,
    and the session's result cache (``shared=True`` runs; it holds their task runs too)."""

    sandbox: object
    probed: object
    framac: object
    shared: dict = field(default_factory=dict)
    cache_dir: Path | None = None

    def options(self, *, smoke: bool, **overrides) -> dict:
        """WP options for a job (paper options unless overridden)."""
        return self.framac.options(self.probed, smoke=smoke, **overrides)

    def run_casp_jobs(self, jobs: list, tmp_path: Path, *, shared: bool = False) -> list[dict]:
        """Run CASP jobs (2 at a time, 300 s each) through the real executor and CASP's
        judge; returns their schema-checked records in job order.

        ``shared=True``: the result cache is the session's (a job or a task run another
        module already made is not made again: the record is re-derived from its stored
        tool output by the kit's parser and judge, as on any cache read); else a fresh
        cache in ``tmp_path`` (for tests whose subject is the run itself)."""
        from harness.benchmarks import casp
        from harness.executor import Executor
        from harness.results import RecordLog, ResultCache, validate
        from harness.sandbox import Limits

        use_shared = shared and self.cache_dir is not None
        ex = Executor(self.framac, self.sandbox, self.probed, shared_files=self.shared, limits=Limits(wall_s=300),
                      parallel=2, cache=ResultCache(self.cache_dir if use_shared else tmp_path / "cache"))
        log = RecordLog(tmp_path / "records.jsonl")
        try:
            recs = ex.run(jobs, log, casp.BENCHMARK.judge)
        finally:
            log.close()
        for r in recs:
            validate("record", r)
        return recs

    def run_items(self, items: list, tmp_path: Path, *, execution: bool = True) -> dict[tuple, dict]:
        """Run candidates ``[(task, mode, output)]`` (smoke tests on, 10 s per goal) as ONE
        run (a module's real-tool cases share it: both cores busy), in the session's result
        cache (``run_casp_jobs(shared=True)``): a candidate
        or a task run that another module already made (the same gold, the same canary,
        01_57's task-soundness run) is made once per session. ``execution=False`` leaves
        out the execution cross-check (``execution_check``), for cases about what the judge
        reads from Frama-C alone (the cross-check has its own tests: test_casp_execution,
        the canaries).

        Returns: ``{(task_id, mode, output): record}``."""
        from harness.benchmarks import Candidate, casp

        opts = self.options(smoke=True, wp_timeout_s=10, **({} if execution else {"execution_check": False}))
        unique = list(dict.fromkeys((t.task_id, mode, out) for t, mode, out in items))
        task = {t.task_id: t for t, _, _ in items}
        jobs = [casp.build_job(task[tid], Candidate(task_id=tid, model=f"m{i}", sample=0, output=out, origin="test"),
                               mode, opts, {"name": "test", "revision": "0"}) for i, (tid, mode, out) in enumerate(unique)]
        by_model = {r["candidate"]["model"]: r for r in self.run_casp_jobs(jobs, tmp_path, shared=True)}
        return {k: by_model[f"m{i}"] for i, k in enumerate(unique)}


@pytest.fixture(scope="session")
def framac_host(tmp_path_factory) -> FramaCHost:
    """Real Frama-C through ``HostSandbox`` (skips when frama-c is not installed), with the
    session's result cache (``shared_cache``: one for all workers)."""
    if shutil.which("frama-c") is None:
        pytest.skip("frama-c is not installed on this machine")
    from harness import toolchains
    from harness.sandbox.local import HostSandbox
    from harness.verifiers.framac import FramaC

    sandbox = HostSandbox()
    probed = toolchains.probe("framac", sandbox)
    assert probed.versions["frama-c"], probed.tools["frama-c"]
    framac = FramaC()
    return FramaCHost(sandbox=sandbox, probed=probed, framac=framac, shared=framac.prepare(sandbox, probed),
                      cache_dir=_session_dir(tmp_path_factory, "shared-result-cache"))


@pytest.fixture(scope="module")
def framac_recorded(request) -> FramaCHost:
    """Frama-C for a module's rule matrix, judged on recorded real outputs
    (``tests/recording.py``): the module's family is its name without ``test_``
    (``test_casp_integrity`` -> ``casp-integrity``, ``tests/recorded/runs/casp-integrity/``).
    Replayed by default (no tool runs: the executor, parser and judge read the real tool's
    recorded output of every command); with ``VERIKIT_RECORD=1`` (``scripts/record.py``) the
    real Frama-C of this host runs every command and the family's recording is replaced
    when the module ends. Its runs use a fresh result cache each (no session cache)."""
    from recording import Recording, family_sandbox, recording_mode

    from harness import toolchains
    from harness.sandbox.local import HostSandbox
    from harness.verifiers.framac import FramaC

    family = request.module.__name__.rsplit(".", 1)[-1].removeprefix("test_").replace("_", "-")
    if recording_mode() and shutil.which("frama-c") is None:
        pytest.fail("the recorder needs the real frama-c on this host (scripts/bootstrap-debian.sh framac)")
    framac = FramaC()
    with family_sandbox(family, framac.name, HostSandbox) as sandbox:
        probed = toolchains.probe("framac", sandbox.inner) if recording_mode() else Recording(family).toolchain()
        yield FramaCHost(sandbox=sandbox, probed=probed, framac=framac, shared=framac.prepare(sandbox, probed))


def _require(reason: str):
    if os.environ.get("VERIKIT_REQUIRE_ENGINE") == "1":
        pytest.fail(f"{reason} (VERIKIT_REQUIRE_ENGINE=1)")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def engine_image():
    """``get(resolve)``: checks that a Docker-API engine answers, then returns
    ``resolve()`` (an image reference or a sandbox). When the engine or the image is
    missing the test skips, or fails under ``VERIKIT_REQUIRE_ENGINE=1`` (set by
    ``nox -s tests``, so CI cannot pass by skipping)."""
    from harness.sandbox import SandboxError
    from harness.sandbox.container import engine_reachable

    def get(resolve):
        if not engine_reachable():
            _require("no Docker-API engine at DOCKER_HOST or the default socket")
        try:
            return resolve()
        except SandboxError as exc:
            _require(str(exc))

    return get


def fetch_from_mirror(name: str, tmp_path_factory):
    """Pinned dataset ``name`` fetched offline (every file sha256-checked) from the mirrors
    of ``VERIKIT_DATA_MIRRORS`` into a fresh cache; skips when it is unset or no mirror holds
    the files."""
    from harness import datasets

    if not os.environ.get("VERIKIT_DATA_MIRRORS"):
        pytest.skip(f"VERIKIT_DATA_MIRRORS is not set: the {name} files come from the data mirror "
                    "(../shared/data beside the checkout)")
    try:
        return datasets.fetch(name, data_dir=tmp_path_factory.mktemp("verikit-data"), offline=True)
    except datasets.DatasetUnavailable as exc:
        pytest.skip(f"no mirror in VERIKIT_DATA_MIRRORS holds the {name} files: {exc}")


@pytest.fixture(scope="session")
def ntp4vc_fetched(tmp_path_factory):
    """The ``ntp4vc`` dataset from the mirror (:func:`fetch_from_mirror`)."""
    return fetch_from_mirror("ntp4vc", tmp_path_factory)


@pytest.fixture(scope="session")
def dafny_intent_fetched(tmp_path_factory):
    """The ``dafny-intent`` dataset fetched offline from the mirrors; skips only when
    ``VERIKIT_DATA_MIRRORS`` is unset (a mirror that lacks a file is an error here)."""
    from harness import datasets

    if not os.environ.get("VERIKIT_DATA_MIRRORS"):
        pytest.skip("VERIKIT_DATA_MIRRORS is not set: the real data mirror is needed")
    return datasets.fetch("dafny-intent", data_dir=tmp_path_factory.mktemp("verikit-data"), offline=True)


@pytest.fixture(scope="session")
def osvbench_fetched(tmp_path_factory):
    """The ``osvbench`` dataset from the mirror (:func:`fetch_from_mirror`): tasks, prompts,
    the published specs and the recorded Hyperkernel log."""
    return fetch_from_mirror("osvbench", tmp_path_factory)


@pytest.fixture(scope="session")
def ntp4vc_task_files(ntp4vc_fetched):
    """``get(language)``: ``[(repo path, text)]`` of the 600 task files of ``language``."""
    from harness.benchmarks import ntp4vc

    tasks = ntp4vc.load_tasks(ntp4vc_fetched)

    def get(language: str) -> list[tuple[str, str]]:
        return [(t.file(language), ntp4vc_fetched.files[t.file(language)].read_text(encoding="utf-8"))
                for t in tasks]

    return get
