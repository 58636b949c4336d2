"""NTP4VC: re-run Why3's Auto_level_3 baseline on a subset of the pearl goals.

The paper's "ATP pass" (Table 2) is Why3's Auto_level_3 (AL3) strategy applied to each VC;
the repository publishes its per-goal outcome in ``data/why3/**/why3_auto_level_3.db.csv``.
This script re-runs AL3 with the stock Why3 1.8.0 of the trixie ``rocq`` image (through
``why3 shell``, see harness/verifiers/why3.py) on a seeded, stratified sample of the 300
pearl test items, from their ``.mlw`` sources, one goal and one prover at a time, and
writes results/reproduced/ntp4vc/why3-al3-rerun.json: command lines, prover versions
(``--version`` probes and ``why3 config detect``), the AL3 definition Why3 generated,
image id, dataset revision, subset definition, per goal published vs re-run, agreement
counts and wall times.

The data root comes from the kit's data settings (``VERIKIT_DATA_MIRRORS``); the engine
from ``DOCKER_HOST``. Usage::

    python scripts/ntp4vc_why3_rerun.py [--n-true 20] [--n-false 10] [--seed 0]
        [--max-wall 45] [--budget 840] [--out results/reproduced/ntp4vc/why3-al3-rerun.json]
    python scripts/ntp4vc_why3_rerun.py --record-fixtures tests/recorded/why3

``--record-fixtures`` instead runs Why3 on the kit's own small WhyML file
(tests/recorded/why3/fixture.mlw) and saves each real output with its provenance, for
tests/test_why3.py.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import platform
import random
import re
import subprocess
import sys
import time
from pathlib import Path, PurePosixPath

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness import datasets, toolchains  # noqa: E402
from harness.benchmarks import ntp4vc  # noqa: E402
from harness.sandbox import Limits  # noqa: E402
from harness.sandbox.container import ContainerSandbox  # noqa: E402
from harness.sandbox.images import resolve  # noqa: E402
from harness.verifiers.why3 import DRIVER, MODULE_VERSION, NAME, WHY3CONF, Why3, strategy_provers  # noqa: E402

OUT = ROOT / "results" / "reproduced" / "ntp4vc" / "why3-al3-rerun.json"
FIXTURE = ROOT / "tests" / "recorded" / "why3" / "fixture.mlw"
MEM_MB = 6144  # AL3's last tier gives each prover 4000 MB; one prover at a time
_USE = re.compile(r"\b(?:use|clone)\s+(?:import\s+|export\s+)?([A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)+)")
_THEORY = re.compile(r"(?m)^\s*(?:module|theory)\s+([A-Za-z_][\w]*)")


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def dependencies(fetched, mlw: str) -> dict[str, bytes]:
    """The ``.mlw`` file and the files of its directory it uses (transitively), read from
    the fetched (sha256-verified) files of the ``ntp4vc`` dataset.

    ``use a.M`` / ``clone a.b.M`` name file ``a.mlw`` / ``a/b.mlw`` (or ``.why``) in the
    load path; only those that exist beside ``mlw`` are shipped (the rest is Why3's
    standard library). Returns job-relative path -> bytes, ``mlw`` under its base name.

    Raises:
        ValueError: a file used is beside ``mlw`` in the mirror but not pinned.
    """
    root = fetched.root
    base = (root / mlw).parent
    pinned = set(fetched.files)
    out: dict[str, bytes] = {}
    todo = [PurePosixPath(mlw).name]
    while todo:
        rel = todo.pop()
        if rel in out:
            continue
        repo_rel = str(PurePosixPath(mlw).parent / rel)
        if repo_rel not in pinned:
            raise ValueError(f"{repo_rel} is used by {mlw} but is not a pinned file of the ntp4vc dataset")
        data = fetched.files[repo_rel].read_bytes()
        out[rel] = data
        text = re.sub(r"\(\*.*?\*\)", " ", data.decode("utf-8", "replace"), flags=re.S)
        for qual in _USE.findall(text):
            parts = qual.split(".")[:-1]
            for ext in (".mlw", ".why"):
                cand = "/".join(parts) + ext
                if (base / cand).is_file() and cand not in out:
                    todo.append(cand)
    return out


def why3_target(task: ntp4vc.Task, text: str) -> tuple[str, str]:
    """(theory, goal) of a task: its goal name is ``<file stem>_<Theory>_<goal>`` with ``'``
    written ``qt`` (``avl_AVL_balanceqtvc`` -> ``("AVL", "balance'vc")``); a file without
    ``module`` declarations is Why3's theory ``Top``.

    Raises:
        ValueError: no theory of the file, or more than one, fits the name.
    """
    stem = PurePosixPath(task.mlw).stem
    theories = set(_THEORY.findall(re.sub(r"\(\*.*?\*\)", " ", text, flags=re.S))) | {"Top"}
    fits = [t for t in theories if task.goal.startswith(f"{stem}_{t}_")]
    if len(fits) != 1:
        raise ValueError(f"{task.task_id}: {len(fits)} theories of {task.mlw} fit {task.goal!r}: {sorted(fits)}")
    rest = task.goal[len(stem) + len(fits[0]) + 2:]
    goal = rest[: -len("qtvc")] + "'vc" if rest.endswith("qtvc") else rest
    return fits[0], goal


def sample(tasks, published: dict[str, bool], n_true: int, n_false: int, seed: int):
    """``n_true`` published-proved and ``n_false`` published-unproved pearl tasks drawn with
    ``random.Random(seed).sample`` from the id-sorted pools, returned in manifest order."""
    pearl = [t for t in tasks if t.source == "pearl"]
    pool_t = sorted(t.task_id for t in pearl if published[t.task_id])
    pool_f = sorted(t.task_id for t in pearl if not published[t.task_id])
    rng = random.Random(seed)
    chosen = set(rng.sample(pool_t, n_true)) | set(rng.sample(pool_f, n_false))
    return [t for t in pearl if t.task_id in chosen], {"pearl": len(pearl), "published_true": len(pool_t),
                                                       "published_false": len(pool_f)}


def git_commit() -> str | None:
    try:
        return subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def run_subset(args) -> int:
    fetched = datasets.fetch("ntp4vc", offline=True)
    tasks = ntp4vc.load_tasks(fetched)
    published = ntp4vc.rescore_auto_level_3(fetched, tasks)["per_task"]
    subset, pools = sample(tasks, published, args.n_true, args.n_false, args.seed)
    image = args.image or resolve("rocq")
    why3 = Why3()
    t_all = time.monotonic()
    started = dt.datetime.now(dt.timezone.utc)
    rows = []
    with ContainerSandbox(image, slots=1) as sb:
        probed = toolchains.probe("rocq", sb, flavor="debian")
        setup = why3.setup(sb, running_provers_max=1)
        shared = why3.files(setup)
        al3 = setup.strategies.get("Auto_level_3")
        if not al3:
            raise SystemExit(f"the image's Why3 generated no Auto_level_3 strategy: {sorted(setup.strategies)}")
        argv, env, _ = why3.command(why3.options(probed, mlw="<FILE>.mlw", theory="<T>", goal="<G>",
                                                 max_wall_s=args.max_wall))
        for i, task in enumerate(subset, 1):
            files = dependencies(fetched, task.mlw)
            mlw = PurePosixPath(task.mlw).name
            theory, goal = why3_target(task, files[mlw].decode("utf-8", "replace"))
            row = {"task_id": task.task_id, "mlw": task.mlw, "ntp4vc_goal": task.goal, "theory": theory,
                   "goal": goal, "files": {k: sha256(v) for k, v in sorted(files.items())},
                   "published": published[task.task_id]}
            if time.monotonic() - t_all > args.budget:
                row.update(rerun=None, verdict="not_run", reason=f"time budget of {args.budget} s used up")
                rows.append(row)
                continue
            opts = why3.options(probed, mlw=mlw, theory=theory, goal=goal, max_wall_s=args.max_wall)
            job_argv, env, collect = why3.command(opts)
            t0 = time.monotonic()
            proc = sb.run(job_argv, files={**files, **shared}, env=env, collect=collect,
                          limits=Limits(wall_s=args.max_wall + 240, mem_mb=MEM_MB, cpus=1))
            res = why3.parse(proc, opts)
            drv = res.extra.get("driver") or {}
            row.update(rerun=res.verdict == "verified", verdict=res.verdict, reason=res.reason,
                       strategy_status=drv.get("status"), strategy_wall_s=drv.get("strategy_wall_s"),
                       job_wall_s=round(time.monotonic() - t0, 2), cpu_s=round(proc.cpu_s, 2),
                       attempts=res.extra.get("attempts") or drv.get("attempt_results"),
                       proved_by=res.extra.get("proved_by"), leaves=res.extra.get("leaves"),
                       leaves_proved=res.extra.get("leaves_proved"), transformations=res.extra.get("transformations"))
            if res.verdict in ("invalid", "infra_error"):
                row["output_tail"] = (proc.stdout + proc.stderr)[-2000:]
            rows.append(row)
            print(f"[{i}/{len(subset)}] {task.task_id}: published={row['published']} rerun={res.verdict} "
                  f"({row['job_wall_s']} s)", flush=True)
    total = round(time.monotonic() - t_all, 1)
    ran = [r for r in rows if r["verdict"] not in ("not_run", "invalid", "infra_error")]
    agree = {"both_true": sum(r["published"] and r["rerun"] for r in ran),
             "both_false": sum(not r["published"] and not r["rerun"] for r in ran),
             "published_only": sum(r["published"] and not r["rerun"] for r in ran),
             "rerun_only": sum(not r["published"] and r["rerun"] for r in ran)}
    agree["agree"] = agree["both_true"] + agree["both_false"]
    agree["compared"] = len(ran)
    unproved = [r for r in ran if not r["rerun"]]
    out = {
        "benchmark": "ntp4vc",
        "what": ("Why3 Auto_level_3 baseline re-run on a sample of pearl goals, from their .mlw sources, "
                 "compared goal by goal with the published data/why3/pearl/why3_auto_level_3.db.csv"),
        "generated_at": started.isoformat(timespec="seconds"),
        "kit": {"git_commit": git_commit(), "script": "scripts/ntp4vc_why3_rerun.py",
                "verifier_module": f"{NAME}/{MODULE_VERSION}", "command_line": sys.argv,
                "host": {"machine": platform.machine(), "python": platform.python_version()}},
        "dataset": {**fetched.provenance(), "mlw_sources_registered": True,
                    "mlw_note": "the .mlw sources are pinned files of the ntp4vc dataset (sha256 also recorded per goal)"},
        "image": {"ref": image, "id": sb.image_digest, "toolchain_manifest": probed.to_json()},
        "why3": {"version": probed.versions.get("why3"),
                 "prover_versions": {k: probed.versions.get(k) for k in ("z3", "cvc4", "cvc5", "eprover")},
                 "config_detect": setup.to_json()["detect"], "provers_detected": setup.provers,
                 "auto_level_3": al3, "auto_level_3_provers": strategy_provers(al3),
                 "running_provers_max": 1,
                 "stock_command_line_can_apply_strategy": {
                     "why3 prove": "no (one prover with -P, transformations with -a; no strategy option)",
                     "why3 replay / bench / session update": "no (replay or add recorded proof attempts)",
                     "why3 shell": ("yes: the ITP server's text front end runs a strategy by name on a selected "
                                    "goal; used here, driven through its standard input")}},
        "commands": {
            "setup": ["why3 config detect (WHY3CONFIG=why3.conf; running_provers_max set to 1)",
                      "why3 config show", "why3 config list-provers"],
            "job": argv,
            "driver_runs": ["why3 session create -L . -o session <FILE>.mlw",
                            "why3 shell --debug=shell_proto -L . session  # stdin: p, goto <id>, Auto_level_3, "
                            "goto 0, sync markers until quiescent, Save, Exit"],
            "env": env, "files": f"<FILE>.mlw and the .mlw files of its directory it uses, {WHY3CONF}, {DRIVER}",
            "limits": {"strategy_max_wall_s": args.max_wall, "job_wall_s": args.max_wall + 240, "mem_mb": MEM_MB,
                       "cpus": 1}},
        "subset": {"source": "pearl", "pools": pools, "n_published_true": args.n_true,
                   "n_published_false": args.n_false, "seed": args.seed,
                   "rule": ("random.Random(seed).sample over the id-sorted published-True pool, then over the "
                            "id-sorted published-False pool (same generator); goals run in manifest order"),
                   "task_ids": [t.task_id for t in subset]},
        "agreement": agree,
        "rerun_unproved_breakdown": {
            "strategy_finished": sum(r["strategy_status"] == "done" for r in unproved),
            "cut_at_max_wall": sum(r["strategy_status"] == "cut" for r in unproved)},
        "not_compared": [{"task_id": r["task_id"], "verdict": r["verdict"], "reason": r["reason"]}
                         for r in rows if r not in ran],
        "wall_time_s": {"total": total, "jobs": round(sum(r.get("job_wall_s") or 0 for r in rows), 1),
                        "per_goal_max": max((r.get("job_wall_s") or 0 for r in rows), default=0)},
        "goals": rows,
        "limitations": LIMITATIONS,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    tmp = args.out.with_suffix(".tmp")
    tmp.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n")
    tmp.replace(args.out)
    print(json.dumps({"agreement": agree, "breakdown": out["rerun_unproved_breakdown"], "total_s": total}))
    print(f"wrote {args.out.relative_to(ROOT) if args.out.is_relative_to(ROOT) else args.out}")
    return 0


LIMITATIONS = [
    "Provers: the paper's AL3 used Z3, CVC4, SPASS, Alt-Ergo and E; the trixie image has Z3 4.13.3, CVC4 1.8, "
    "CVC5 1.1.2 and E 3.2.5 (no Alt-Ergo, no SPASS), and Why3 generates Auto_level_3 from what it detects.",
    "E 3.2.5 is not recognized by Why3 1.8.0, which drives it with E 2.0's command line; E 3 rejects it "
    "(option -t), so every E call of the strategy is a HighFailure.",
    "The strategy is cut at --max-wall seconds per goal (the paper: 10 minutes on a 12-core workstation) and "
    "provers run one at a time, so a published-True goal whose proof needs more time is counted as not proved "
    "(listed as cut), and published-False goals are mostly cut before the strategy ends.",
    "The authors used a modified Why3 1.8.0 (why3-for-NTP: its shell prints the proof tree as JSON); this "
    "re-run uses the stock Debian build, whose strategies are generated from the locally detected provers.",
]


# ---------------------------------------------------------------------------------------
# Recorded fixtures for tests/test_why3.py
# ---------------------------------------------------------------------------------------

FIXTURE_CASES = [
    # (case name, options overrides, target theory, goal, file name to give the job)
    ("strategy_proved", {"max_wall_s": 60}, "Fixture", "inc'vc", "fixture.mlw"),
    ("strategy_failed", {"max_wall_s": 120}, "Fixture", "wrong'vc", "fixture.mlw"),
    ("strategy_cut", {"max_wall_s": 8}, "Fixture", "fermat3", "fixture.mlw"),
    ("strategy_goal_not_found", {"max_wall_s": 30}, "Fixture", "nosuch'vc", "fixture.mlw"),
    ("strategy_syntax_error", {"max_wall_s": 30}, "Fixture", "inc'vc", "broken.mlw"),
    ("prove_valid", {"mode": "prove", "prover": "z3", "time_limit_s": 5}, "Fixture", "inc'vc", "fixture.mlw"),
    ("prove_unknown", {"mode": "prove", "prover": "cvc4", "time_limit_s": 5}, "Fixture", "wrong'vc", "fixture.mlw"),
    ("prove_timeout", {"mode": "prove", "prover": "cvc4", "time_limit_s": 1}, "Fixture", "fermat3", "fixture.mlw"),
    ("prove_eprover", {"mode": "prove", "prover": "Eprover", "time_limit_s": 2}, "Fixture", "inc'vc", "fixture.mlw"),
    ("prove_split", {"mode": "prove", "prover": "z3", "time_limit_s": 5, "transformations": ["split_vc"]},
     "Fixture", "pair'vc", "fixture.mlw"),
    ("prove_type_error", {"mode": "prove", "prover": "z3", "time_limit_s": 5}, "Fixture", "inc'vc", "typo.mlw"),
]


def fixture_files(name: str) -> dict[str, bytes]:
    """The job's WhyML file for a fixture case: fixture.mlw itself, or a broken variant
    derived from it (``broken.mlw``: a syntax error; ``typo.mlw``: a type error)."""
    text = FIXTURE.read_text()
    if name == "broken.mlw":
        text = text.replace("= x + 1", "= x +", 1)
    elif name == "typo.mlw":
        text = text.replace("= x + 1", "= x + true", 1)
    return {name: text.encode()}


def record_fixtures(args) -> int:
    outdir: Path = args.record_fixtures
    outdir.mkdir(parents=True, exist_ok=True)
    image = args.image or resolve("rocq")
    why3 = Why3()
    with ContainerSandbox(image, slots=1) as sb:
        probed = toolchains.probe("rocq", sb, flavor="debian")
        setup = why3.setup(sb, running_provers_max=1)
        shared = why3.files(setup)
        (outdir / "setup.json").write_text(json.dumps({
            "provenance": _provenance(sb, probed, ["why3", "config", "detect"]),
            "detect_stdout": setup.detect_log, "strategies": setup.strategies, "provers": setup.provers,
            "why3_conf": setup.conf.decode()}, indent=1) + "\n")
        for case, over, theory, goal, fname in FIXTURE_CASES:
            opts = why3.options(probed, mlw=fname, theory=theory, goal=goal, **over)
            argv, env, collect = why3.command(opts)
            t0 = time.monotonic()
            proc = sb.run(argv, files={**fixture_files(fname), **shared}, env=env, collect=collect,
                          limits=Limits(wall_s=300, mem_mb=MEM_MB, cpus=1))
            rec = {"provenance": _provenance(sb, probed, argv), "options": opts, "env": env, "collect": collect,
                   "argv": proc.argv, "returncode": proc.returncode, "stdout": proc.stdout, "stderr": proc.stderr,
                   "wall_s": round(time.monotonic() - t0, 2), "timed_out": proc.timed_out,
                   "files": {k: v.decode("utf-8", "replace") for k, v in proc.files.items()}}
            (outdir / f"{case}.json").write_text(json.dumps(rec, indent=1, ensure_ascii=False) + "\n")
            print(f"{case}: exit {proc.returncode}, {why3.parse(proc, opts).verdict}", flush=True)
    return 0


def _provenance(sb, probed, argv) -> dict:
    return {"recorded_by": "scripts/ntp4vc_why3_rerun.py --record-fixtures", "command": argv,
            "image": sb.image, "image_id": sb.image_digest,
            "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            "versions": {k: probed.versions.get(k) for k in ("why3", "z3", "cvc4", "cvc5", "eprover")}}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n-true", type=int, default=20, help="published-proved goals to draw")
    ap.add_argument("--n-false", type=int, default=10, help="published-unproved goals to draw")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-wall", type=float, default=45.0, help="seconds per goal before the strategy is cut")
    ap.add_argument("--budget", type=float, default=840.0, help="start no goal after this many seconds")
    ap.add_argument("--image", default=None, help="image reference (default: the rocq toolchain's image)")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--record-fixtures", type=Path, default=None, metavar="DIR")
    args = ap.parse_args()
    if args.record_fixtures:
        return record_fixtures(args)
    return run_subset(args)


if __name__ == "__main__":
    sys.exit(main())
