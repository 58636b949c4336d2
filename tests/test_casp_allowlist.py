"""CASP allow-lists and the fail-closed view, on the real Frama-C's outputs (recorded:
``framac_recorded``).

Frama-C's view (``harness/verifiers/drivers/framac_view.ml``) lists every function
(builtins flagged), every global variable, every declaration occurrence and whatever it
cannot classify; ``integrity.allowlist_checks`` judges what the candidate wrote against
the declared lists (harness/benchmarks/casp/docs.md "Allow-lists"). Two layers of tests:

- on Frama-C's views alone (parse only, no WP): many spellings of each class must break
  the expected rule, and honest candidates none (the view of a task's fixed part is asked
  for once per task and mode and shared, ``_TASK_VIEWS``);
- end to end (WP, the judge, the records; ONE run, the ``batch`` fixture): a cheat of
  each class is ``rejected``, and the honest neighbours (an attribute that changes
  nothing, a libc call the task's header declares, forward gotos) still verify;
- the kit's new canaries get their verdicts on the kit's own pair.

Both layers are judged on recorded real outputs (``tests/recording.py``): the family
``casp-allowlist``, ``tests/recorded/runs/casp-allowlist/``, holds what the real Frama-C
answered to each command, the view commands (``frama-c -load-script
verikit_framac_view.ml FILE``, run through the recorded sandbox) and every command of the
end-to-end run (gate, task runs, verification, execution cross-check). In a normal session
no tool runs: the kit's executor, parser and judge, and the view checks, read those
outputs. Refresh the recording (real Frama-C on this host; a few minutes) with::

    python scripts/record.py casp-allowlist

after a change to the cases, the job's files or the driver (a command the recording does
not hold fails its test and names that command); ``tests/test_freshness.py`` re-runs a
daily sample of its jobs live. What stays live: the derivation script on casp-sample10
(``test_derivation_script_finds_every_honest_construct_allowed``, slow); the allow-list
canaries (builtin attribute, reserved name, variant relation, huge local, attribute,
builtin call, clause, forward goto) run live on 01_57 in ``tests/test_casp.py``
(``test_canaries_get_their_verdicts``).

Tasks: CASP's 01_57 (``divmult``), 02_12 (includes ``<string.h>``, calls ``strlen``),
05_125 and 06_114 (declares ``abs`` and ``max``) from the mirror, and three small tasks
written for these tests (one includes ``<stdlib.h>``).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.benchmarks import Candidate, casp
from harness.benchmarks.casp import allowlists, integrity
from harness.benchmarks.casp.fragment import fragment_checks
from harness.model import Limits
from harness.verifiers.framac import VIEW_SCRIPT
from test_casp_integrity import LOOP_TASK, STDLIB_TASK  # the kit-written tasks both files judge candidates on
from test_casp_integrity import _run  # a batch's records of [(task, mode, output)], in that order

DS = {"name": "test", "revision": "0"}
C, S = "code-from-spec", "spec-from-code"


SIG = "int divmult(int a, int b)\n"
GOLD_BODY = "{\n  return (a / b) * b + (a % b);\n}\n"
COUNT_HEAD = "int count(int n) {\n  int i = 0;\n  /*@ loop invariant 0 <= i <= n;\n      loop assigns i;\n"


def _framac():
    if shutil.which("frama-c") is None:
        pytest.skip("frama-c is not installed on this machine")


#: Frama-C's view of a task's fixed part (``task.c``), by the sha256 of its text: the same for
#: every candidate of a task and mode, so it is asked for once per module (by worker) and
#: shared by the view tests (the recording holds it once either way: the same command).
_TASK_VIEWS: dict[str, str | None] = {}


def _view_text(host, name: str, text: str) -> str | None:
    """Frama-C's view (JSON text) of the file ``name`` holding ``text``, or None when
    Frama-C wrote none: the command the job's driver runs for it (``framac_job.sh``), in
    ``host``'s sandbox (the recorded one: replayed, or run and kept by the recorder), with
    that file and the view script alone. Nothing in the command depends on the machine or
    the test's directories, so that it is the same command in every session."""
    view = f"{name}.json"
    proc = host.sandbox.run(["frama-c", "-load-script", VIEW_SCRIPT, name],
                            files={name: text, VIEW_SCRIPT: host.shared[VIEW_SCRIPT]},
                            env={"VERIKIT_VIEW": view}, collect=[view], limits=Limits(wall_s=300))
    return proc.files[view].decode() if view in proc.files else None


def _views(host, task, mode: str, output: str) -> tuple[dict | None, dict | None]:
    """Frama-C's views of the verified file and of the task's fixed part, of the files a
    job builds (parse only: no WP); the task's is shared (``_TASK_VIEWS``). The views
    name each file by its path in the sandbox's scratch directory: the rules read only
    whether a file is named (a builtin's is empty), never which."""
    job = casp.build_job(task, Candidate(task_id=task.task_id, model="m", sample=0, output=output, origin="test"),
                         mode, {}, DS)
    assert job.precheck is None, job.precheck
    ref = hashlib.sha256(job.task_run[integrity.REFERENCE].encode()).hexdigest()
    if ref not in _TASK_VIEWS:
        _TASK_VIEWS[ref] = _view_text(host, integrity.REFERENCE, job.task_run[integrity.REFERENCE])
    task_text = _TASK_VIEWS[ref]
    view = _view_text(host, "candidate.c", job.files["candidate.c"])
    return (json.loads(view) if view is not None else None,
            json.loads(task_text) if task_text is not None else None)


def _broken(host, task, mode, output) -> dict[str, str]:
    """rule name -> detail of every rule the view checks find broken."""
    view, task_view = _views(host, task, mode, output)
    assert view is not None and task_view is not None, "Frama-C did not parse the file"
    checks = integrity.view_checks(view, task_view, task.function, mode)
    checks += [c for c in fragment_checks(view, task_view, task.function, mode, "") if c["name"] != "compiler-agrees"]
    return {c["name"]: c["detail"] for c in checks if not c["ok"]}


# --- on Frama-C's views ----------------------------------------------------------------------

#: (name, task key, mode, output, rule that must break, words the detail must contain)
CHEATS = [
    # own function marked builtin (attribute) or given a reserved name
    ("FC_BUILTIN on a contract-only declaration", "01_57", C,
     "/*@ assigns \\nothing;\n    ensures \\result == a; */\nint vk_h(int a, int b) __attribute__((FC_BUILTIN));\n"
     + SIG + "{ return vk_h(a, b); }\n", "no-reserved-names", "vk_h() (line"),
    ("__FC_BUILTIN__ on a definition", "01_57", C,
     "__attribute__((__FC_BUILTIN__)) int vk_h(int a, int b) { return a; }\n" + SIG + "{ return vk_h(a, b); }\n",
     "no-reserved-names", "marked as a Frama-C builtin"),
    ("FC_BUILTIN on the target (code-from-spec)", "01_57", C,
     "int divmult(int a, int b) __attribute__((FC_BUILTIN));\n" + SIG + GOLD_BODY, "no-reserved-names",
     "divmult() of the task"),
    ("FC_BUILTIN on the target (spec-from-code)", "01_57", S,
     "int divmult(int a, int b) __attribute__((FC_BUILTIN));\n/*@ requires b != 0;\n    requires b != -1;\n"
     "    assigns \\nothing;\n    ensures \\result == a; */\n" + SIG + GOLD_BODY, "no-reserved-names", "divmult()"),
    ("__fc_ helper", "01_57", C, "int __fc_id(int x) { return x; }\n" + SIG + "{ return __fc_id(a); }\n",
     "no-reserved-names", "__fc_id"),
    ("Frama_C_ declaration with a contract", "01_57", C,
     "/*@ assigns \\nothing;\n    ensures \\result == a; */\nint Frama_C_vk(int a);\n" + SIG + "{ return Frama_C_vk(a); }\n",
     "no-reserved-names", "Frama_C_vk"),
    ("__builtin_ called undeclared", "01_57", C, SIG + "{ return __builtin_abs(a); }\n", "no-reserved-names",
     "__builtin_abs"),
    ("__VERIFIER_ nondet", "01_57", C, "int __VERIFIER_nondet_int(void);\n" + SIG
     + "{ int x = __VERIFIER_nondet_int(); return a + x - x; }\n", "no-reserved-names", "__VERIFIER_nondet_int"),
    ("VeriKit global, any case", "01_57", C, "int VeriKit_state;\n" + SIG + GOLD_BODY, "no-reserved-names",
     "VeriKit_state"),
    ("reserved local", "01_57", C, SIG + "{\n  int __fc_r = (a / b) * b + (a % b);\n  return __fc_r;\n}\n",
     "no-reserved-names", "__fc_r"),
    ("reserved logic name (spec-from-code)", "01_57", S,
     "/*@ predicate __fc_same(integer x, integer y) = x == y; */\n/*@ requires b != 0;\n    requires b != -1;\n"
     "    assigns \\nothing;\n    ensures __fc_same(\\result, a); */\n" + SIG + GOLD_BODY, "no-reserved-names", "__fc_same"),
    # libc or task function re-declared (its contract merges into the libc/task one)
    ("libc abs re-declared with a contract", "stdlib", C,
     "/*@ assigns \\nothing;\n    ensures \\result == (j < 10 ? j : 10); */\nint abs(int j);\n"
     "int clamp(int n) { return abs(n); }\n", "no-redeclarations", "abs()"),
    ("libc abs re-declared, extern, parenthesised", "stdlib", C,
     "/*@ assigns \\nothing;\n    ensures \\result == (j < 10 ? j : 10); */\nextern int (abs)(int j);\n"
     "int clamp(int n) { return abs(n); }\n", "no-redeclarations", "abs()"),
    ("libc abs re-declared without a contract", "stdlib", C,
     "int abs(int j);\nint clamp(int n) {\n  if (n < 10) return n;\n  return 10;\n}\n", "no-redeclarations",
     "function declaration of abs()"),
    ("libc abs redefined", "stdlib", C, "int abs(int j) { return j < 10 ? j : 10; }\nint clamp(int n) { return abs(n); }\n",
     "no-redeclarations", "function definition of abs()"),
    ("libc abs re-declared (spec-from-code)", "stdlib", S,
     "/*@ assigns \\nothing;\n    ensures \\result == 10; */\nint abs(int j);\n" + STDLIB_TASK.contract + "\n"
     + STDLIB_TASK.code, "no-redeclarations", "abs()"),
    ("libc strlen re-declared (CASP 02_12)", "02_12", C,
     "/*@ assigns \\nothing;\n    ensures \\result == 0; */\nsize_t strlen(const char *s);\n"
     "int matcher(char * x0) {\n  return strlen(x0) == 0;\n}\n", "no-redeclarations", "strlen()"),
    ("task max re-declared (CASP 06_114)", "06_114", C,
     "/*@ assigns \\nothing;\n    ensures \\result == x; */\nint max(int x, int y);\n"
     "int max_abs(int x, int y) {\n  x = abs(x);\n  y = abs(y);\n  return max(x, y);\n}\n", "no-redeclarations", "max()"),
    ("block-scope prototype: noreturn on libc abs", "stdlib", C,
     "int clamp(int n) {\n  int abs(int) __attribute__((noreturn));\n  if (n < 10) return n;\n  return 10;\n}\n",
     "no-redeclarations", "attribute noreturn added to abs() of the libc"),
    # variants and decreases with a relation
    ("loop variant for a relation", "loop", C,
     "/*@ predicate vk_gt(integer x, integer y) = x > y; */\nint vk_unused;\n" + COUNT_HEAD
     + "      loop variant n - i for vk_gt; */\n  while (i < n) i++;\n  return i;\n}\n", "allow-list",
     "loop variant for relation"),
    ("decreases for a relation on a helper", "loop", C,
     "/*@ predicate vk_gt(integer x, integer y) = x > y; */\n/*@ decreases k for vk_gt;\n    assigns \\nothing;\n"
     "    ensures \\result == k; */\nint vk_id(int k) { return k; }\n" + LOOP_TASK.code.replace("return i;", "return vk_id(i);"),
     "allow-list", "decreases for relation"),
    ("decreases for a relation (spec-from-code)", "01_57", S,
     "/*@ predicate vk_gt(integer x, integer y) = x > y; */\n/*@ requires b != 0;\n    requires b != -1;\n"
     "    decreases a for vk_gt;\n    assigns \\nothing;\n    ensures \\result == a; */\n" + SIG + GOLD_BODY,
     "allow-list", "decreases for relation"),
    # local storage
    ("1.2 MB local array", "01_57", C, SIG + "{\n  int vk_big[300000];\n  vk_big[0] = a;\n  return vk_big[0];\n}\n",
     "local-storage", "vk_big"),
    ("two 600 kB arrays", "01_57", C, SIG + "{\n  char vk_x[600000];\n  char vk_y[600000];\n  vk_x[0] = 0; vk_y[0] = 0;\n"
     "  return (a / b) * b + (a % b);\n}\n", "local-storage", "1200"),
    ("struct holding a big array", "01_57", C, SIG + "{\n  struct { int v[300000]; } vk_s;\n  vk_s.v[0] = a;\n"
     "  return vk_s.v[0];\n}\n", "local-storage", "vk_s"),
    ("variable-length array", "01_57", C, SIG + "{\n  int vk_v[b > 0 ? b : 1];\n  vk_v[0] = a;\n  return vk_v[0];\n}\n",
     "local-storage", "variable-length array vk_v"),
    ("huge local in a helper", "01_57", C, "int vk_h(int x) {\n  long vk_t[200000];\n  vk_t[0] = x;\n  return (int)vk_t[0];\n}\n"
     + SIG + "{ return vk_h((a / b) * b + (a % b)); }\n", "local-storage", "vk_h()"),
    # attributes and types not on the lists
    ("pure helper", "01_57", C, "__attribute__((pure)) int vk_id(int x) { return x; }\n" + SIG + GOLD_BODY,
     "allow-list", "attribute pure"),
    ("volatile local", "01_57", C, SIG + "{\n  volatile int r = (a / b) * b + (a % b);\n  return r;\n}\n",
     "allow-list", "attribute volatile"),
    ("restrict parameter", "01_57", C, "int vk_get(int * restrict p) { return *p; }\n" + SIG
     + "{\n  int r = (a / b) * b + (a % b);\n  return vk_get(&r);\n}\n", "allow-list", "attribute restrict"),
    ("aligned local", "01_57", C, SIG + "{\n  int r __attribute__((aligned(16))) = (a / b) * b + (a % b);\n  return r;\n}\n",
     "allow-list", "attribute aligned"),
    ("packed struct", "01_57", C, "struct __attribute__((packed)) vk_p { char c; int v; };\n" + SIG
     + "{\n  struct vk_p p;\n  p.v = (a / b) * b + (a % b);\n  return p.v;\n}\n", "allow-list", "attribute packed"),
    ("long double", "01_57", C, SIG + "{\n  long double r = (a / b) * b + (a % b);\n  return (int)r;\n}\n",
     "allow-list", "type long double"),
    ("variadic helper", "01_57", C, "int vk_first(int n, ...) { return n; }\n" + SIG + "{ return vk_first(a, b); }\n",
     "allow-list", "variadic function definition vk_first()"),
    # Frama-C builtins called
    ("call through a variable-length array", "01_57", C, SIG + "{\n  int vk_n = 1;\n  int vk_v[vk_n];\n  vk_v[0] = a;\n"
     "  return vk_v[0];\n}\n", "allow-list", "call to Frama-C builtin __fc_vla_alloc()"),
    ("call to an own function marked builtin", "01_57", C,
     "__attribute__((FC_BUILTIN)) int vk_h(int x) { return x; }\n" + SIG + "{ return vk_h(a); }\n",
     "allow-list", "call to Frama-C builtin vk_h()"),
    ("__builtin_alloca", "01_57", C, SIG + "{\n  int *p = __builtin_alloca(sizeof(int));\n  *p = a;\n  return *p;\n}\n",
     "allow-list", "__builtin_alloca()"),
    # other constructs: globals, ghost code, clauses, annotations, callees
    ("global asm", "01_57", C, "__asm__(\"nop\");\n" + SIG + GOLD_BODY, "allow-list", "global asm"),
    ("ghost local", "01_57", C, SIG + "{\n  //@ ghost int g = 0;\n  return (a / b) * b + (a % b);\n}\n",
     "allow-list", "ghost"),
    ("ghost global", "01_57", C, "//@ ghost int vk_g;\nint vk_unused;\n" + SIG + GOLD_BODY, "allow-list", "vk_g"),
    ("statement contract", "01_57", C, SIG + "{\n  int r;\n  /*@ assigns r;\n      ensures r == a; */\n"
     "  r = (a / b) * b + (a % b);\n  return r;\n}\n", "allow-list", "statement contract"),
    ("exits clause on a helper", "01_57", C, "/*@ assigns \\nothing;\n    exits \\false;\n    ensures \\result == x; */\n"
     "int vk_id(int x) { return x; }\n" + SIG + "{ return vk_id((a / b) * b + (a % b)); }\n", "allow-list", "exits clause"),
    ("terminates \\false (spec-from-code)", "01_57", S,
     "/*@ requires b != 0;\n    requires b != -1;\n    terminates \\false;\n    assigns \\nothing;\n"
     "    ensures \\result == a; */\n" + SIG + GOLD_BODY, "allow-list", "terminates"),
    ("libc function the list does not hold", "stdlib", C,
     "int clamp(int n) {\n  int *p = malloc(sizeof(int));\n  if (n < 10) return n;\n  return 10;\n}\n", "allow-list", "malloc()"),
    ("indirect call", "01_57", C, "int vk_id(int x) { return x; }\n" + SIG
     + "{\n  int (*f)(int) = vk_id;\n  return f((a / b) * b + (a % b));\n}\n", "allow-list", "indirect call"),
    # a libc function whose Frama-C 25 contract is a known soundness bug (scripts/casp_libc.py refuses it)
    ("strrchr, whose Frama-C contract is unsound (CASP 02_12)", "02_12", C,
     "int matcher(char * x0) {\n  return strrchr(x0, 'a') != 0;\n}\n", "allow-list", "frama-c:libc-strrchr-found-ensures"),
    # WP's sound fragment (fragment.py): what the Typed model reads differently from the
    # compiled program, and the \\from clauses it never checks
    ("union read through another member", "01_57", C,
     SIG + "{\n  union { int x; int y; } u;\n  u.x = a;\n  u.y = 7;\n  return u.x;\n}\n", "typed-memory", "union"),
    ("a byte of an int written through a char pointer", "01_57", C,
     SIG + "{\n  int r = a;\n  char *p = (char *)&r;\n  p[0] = 0;\n  return r;\n}\n", "typed-memory", "int * -> char *"),
    ("a pointer through an integer", "01_57", C,
     SIG + "{\n  int r = a;\n  long v = (long)&r;\n  return *(int *)v;\n}\n", "typed-memory", "pointer cast"),
    ("a value beyond a bit-field's width", "01_57", C,
     SIG + "{\n  struct { int v : 4; } s;\n  s.v = a;\n  return s.v;\n}\n", "typed-memory", "bit-field"),
    ("\\from in the contract (spec-from-code)", "01_57", S,
     "/*@ requires b != 0;\n    requires b != -1;\n    assigns \\result \\from \\nothing;\n    ensures \\result == a; */\n"
     + SIG + GOLD_BODY, "no-from", "\\from"),
    ("five frames of 1 MB locals in one call chain", "01_57", C,
     "".join(f"int vk_f{i}(int x) {{\n  char vk_b[1000000];\n  vk_b[0] = 0;\n"
             f"  return {f'vk_f{i + 1}(x)' if i < 4 else 'x'} + vk_b[0];\n}}\n" for i in range(4, -1, -1))
     + SIG + "{\n  return vk_f0((a / b) * b + (a % b));\n}\n", "local-storage", "call chain"),
    ("a recursive logic definition no function satisfies (spec-from-code)", "01_57", S,
     "/*@ logic integer vk_f(integer x) = vk_f(x) + 1; */\n/*@ requires b != 0;\n    requires b != -1;\n"
     "    assigns \\nothing;\n    ensures \\result == a || vk_f(a) == 0; */\n" + SIG + GOLD_BODY,
     "well-founded-logic", "vk_f"),
]

HONEST = [
    ("gold code", "01_57", C, None),
    ("gold contract", "01_57", S, None),
    ("gold code with strlen (CASP 02_12)", "02_12", C, None),
    ("gold code calling the task's abs and max (CASP 06_114)", "06_114", C, None),
    ("gold code with double (CASP 05_125)", "05_125", C, None),
    ("helper with __attribute__((unused))", "01_57", C,
     "static int __attribute__((unused)) vk_spare(int x) { return x; }\n" + SIG + GOLD_BODY),
    ("static inline always_inline helper, const local", "01_57", C,
     "/*@ assigns \\nothing;\n    ensures \\result == x; */\nstatic inline __attribute__((always_inline)) int vk_id(const int x)"
     " { return x; }\n" + SIG + "{\n  const int r = (a / b) * b + (a % b);\n  return vk_id(r);\n}\n"),
    ("abs from the task's <stdlib.h>", "stdlib", C, "int clamp(int n) {\n  if (abs(n) < 10) return n;\n  return 10;\n}\n"),
    ("forward goto", "01_57", C, SIG + "{\n  int r = (a / b) * b + (a % b);\n  if (r == a) goto done;\n  r = a;\n"
     " done:\n  return r;\n}\n"),
    ("goto out of a loop", "loop", C, COUNT_HEAD + "      loop variant n - i; */\n  while (1) {\n    if (i >= n) goto out;\n"
     "    i++;\n  }\n out:\n  return i;\n}\n"),
    ("forward goto inside a loop", "loop", C, COUNT_HEAD + "      loop variant n - i; */\n  while (i < n) {\n"
     "    if (i % 2) goto next;\n  next:\n    i++;\n  }\n  return i;\n}\n"),
    ("switch, for, break, continue, struct, array, bit-field", "loop", C,
     "struct vk_s { int v : 12; unsigned f : 1; };\n" + COUNT_HEAD.replace("int i = 0;", "int i = 0;\n  int t[4] = {0};")
     + "      loop variant n - i; */\n  for (;;) {\n    if (i >= n) break;\n    switch (i % 3) { case 0: t[0]++; break;"
     " default: break; }\n    i++;\n    continue;\n  }\n  struct vk_s s = { 1, 0 };\n  return i + s.f;\n}\n"),
    ("a lemma, an inductive and a logic type", "01_57", C,
     "/*@ lemma vk_ok: \\forall integer x; x + 0 == x; */\n"
     "/*@ inductive vk_even(integer n) { case z: vk_even(0); case s: \\forall integer n; vk_even(n) ==> vk_even(n + 2); } */\n"
     "/*@ type vk_t; */\nint vk_unused;\n" + SIG + GOLD_BODY),
    ("terminates \\true and decreases (spec-from-code)", "01_57", S,
     "/*@ requires b != 0;\n    requires b != -1;\n    terminates \\true;\n    decreases a;\n    assigns \\nothing;\n"
     "    ensures \\result == a; */\n" + SIG + GOLD_BODY),
    # ordinary C the allow-lists once refused: a libc call beyond the old hand list, a static
    # local (Frama-C tags its lifted global fc_local_static), a loop that returns from inside
    ("strstr from the task's <string.h> (CASP 02_12)", "02_12", C,
     "int matcher(char * x0) {\n  return strstr(x0, x0) == x0;\n}\n"),
    ("a static local", "loop", C, COUNT_HEAD.replace("int i = 0;", "static const int vk_zero = 0;\n  int i = vk_zero;")
     + "      loop variant n - i; */\n  while (i < n) i++;\n  return i;\n}\n"),
    ("a loop that returns from inside", "loop", C, COUNT_HEAD + "      loop variant n - i; */\n  while (1) {\n"
     "    if (i == n) return i;\n    i++;\n  }\n}\n"),
    ("INT_MAX from the task's <limits.h> (CASP 02_12)", "02_12", C,
     "int matcher(char * x0) {\n  int vk_limit = INT_MAX;\n  return x0[0] == 'a' && vk_limit > 0;\n}\n"),
    # the honest neighbours of the fragment rules
    ("a union used through one member", "01_57", C,
     SIG + "{\n  union { int x; long y; } u;\n  u.x = (a / b) * b + (a % b);\n  return u.x;\n}\n"),
    ("a bit-field read as written", "01_57", C,
     "struct vk_b { unsigned f : 3; };\n" + SIG + "{\n  struct vk_b s;\n  s.f = 5;\n  s.f = (a == a);\n"
     "  int r = (a / b) * b + (a % b);\n  return s.f == 1 ? r : 0;\n}\n"),
    ("a prototyped helper defined after its use", "01_57", C,
     "int vk_id(int x);\n" + SIG + "{\n  return vk_id((a / b) * b + (a % b));\n}\n"
     "/*@ assigns \\nothing;\n    ensures \\result == x; */\nint vk_id(int x) { return x; }\n"),
    ("a recursive logic definition that decreases (spec-from-code)", "01_57", S,
     "/*@ logic integer vk_count(integer n) = n <= 0 ? 0 : vk_count(n - 1) + 1; */\n/*@ requires b != 0;\n"
     "    requires b != -1;\n    assigns \\nothing;\n    ensures \\result == a;\n    ensures vk_count(0) == 0; */\n"
     + SIG + GOLD_BODY),
    ("a string copied with memcpy (CASP 02_12)", "02_12", C,
     "int matcher(char * x0) {\n  char vk_b[1];\n  memcpy(vk_b, x0, 1);\n  return vk_b[0] == 'a';\n}\n"),
]


def _task(key, casp_tasks):
    return {"stdlib": STDLIB_TASK, "loop": LOOP_TASK}.get(key) or casp_tasks[key]


@pytest.mark.recorded
@pytest.mark.parametrize("name,key,mode,output,rule,words", CHEATS, ids=[c[0] for c in CHEATS])
def test_cheats_break_their_rule_on_the_view(casp_tasks, framac_recorded, name, key, mode, output, rule, words):
    broken = _broken(framac_recorded, _task(key, casp_tasks), mode, output)
    assert rule in broken, (name, broken)
    assert words in broken[rule], (name, broken[rule])


@pytest.mark.recorded
@pytest.mark.parametrize("name,key,mode,output", HONEST, ids=[h[0] for h in HONEST])
def test_honest_candidates_break_no_rule_on_the_view(casp_tasks, framac_recorded, name, key, mode, output):
    task = _task(key, casp_tasks)
    if output is None:
        output = task.code if mode == C else task.contract + "\n" + task.code
    assert _broken(framac_recorded, task, mode, output) == {}, name


@pytest.mark.recorded
def test_view_lists_every_function_variable_and_declaration(casp_tasks, framac_recorded):
    """Fail closed: builtins are listed (flagged), so are global variables (a static
    local too), every declaration occurrence and the global asm; a forward goto is no
    cycle, a backward one is."""
    out = ("__asm__(\"nop\");\nint vk_g = 1;\n/*@ assigns \\nothing; ensures \\result == x; */\n"
           "int vk_h(int x) __attribute__((FC_BUILTIN));\nint vk_h(int x) { return x; }\n"
           + SIG + "{\n  static int vk_s;\n  int n = 1;\n  int v[n];\n  v[0] = vk_s;\n  if (a) goto fwd;\n back:\n"
           "  if (v[0]++ < 3) goto back;\n fwd:\n  return (a / b) * b + (a % b);\n}\n")
    view, task_view = _views(framac_recorded, casp_tasks["01_57"], C, out)
    fns = {f["name"]: f for f in view["functions"]}
    assert fns["vk_h"]["builtin"] and fns["vk_h"]["defined"] and "FC_BUILTIN" in fns["vk_h"]["attribute_names"]
    assert fns["__fc_vla_alloc"]["builtin"] and fns["__fc_vla_alloc"]["file"] == ""
    assert {v["name"] for v in view["variables"]} >= {"vk_g", "divmult_vk_s"}
    decls = [(d["kind"], d["name"]) for d in view["declarations"] if d["name"] == "vk_h"]
    assert decls == [("function declaration", "vk_h"), ("function definition", "vk_h")]
    assert ("asm", "") in [(d["kind"], d["name"]) for d in view["declarations"]]
    assert [g["cycle"] for g in fns["divmult"]["gotos"]] == [False, True]
    assert any(v["vla"] for v in fns["divmult"]["locals"])
    assert view["unclassified"] == [] and task_view["unclassified"] == []


@pytest.mark.recorded
def test_goto_cycles_on_frama_c_cfg(framac_recorded):
    """A goto forms a loop when its target reaches it again without a loop statement's
    back edge: a goto back to a labelled loop from after it does (it restarts the loop's
    variant), a goto out of an inner loop to a later label does not."""
    helpers = ("int vk_back(int n, int c) {\n  int i = 0;\n top:\n  /*@ loop variant n - i; */\n  while (i < n) i++;\n"
               "  if (c-- > 0) goto top;\n  return i;\n}\n"
               "int vk_nested(int n) {\n  int i = 0, j;\n  /*@ loop variant n - i; */\n  while (i < n) {\n"
               "    /*@ loop variant n - j; */\n    for (j = 0; j < n; j++) { if (j == 3) goto next; }\n   next:\n"
               "    i++;\n  }\n again:\n  if (i-- > 0) goto again;\n  return i;\n}\n")
    view, _ = _views(framac_recorded, LOOP_TASK, C, helpers + LOOP_TASK.code)
    fns = {f["name"]: f for f in view["functions"]}
    assert [g["cycle"] for g in fns["vk_back"]["gotos"]] == [True]
    assert [g["cycle"] for g in fns["vk_nested"]["gotos"]] == [False, True]


# --- end to end ------------------------------------------------------------------------------

CHEAT_PICKS = ["FC_BUILTIN on a contract-only declaration", "__fc_ helper", "libc abs re-declared with a contract",
               "loop variant for a relation", "1.2 MB local array", "pure helper",
               "call through a variable-length array", "global asm", "union read through another member",
               "a byte of an int written through a char pointer", "a value beyond a bit-field's width",
               "\\from in the contract (spec-from-code)",
               "a recursive logic definition no function satisfies (spec-from-code)"]
HONEST_PICKS = ["helper with __attribute__((unused))", "static inline always_inline helper, const local",
                "abs from the task's <stdlib.h>", "forward goto", "goto out of a loop", "forward goto inside a loop",
                "strstr from the task's <string.h> (CASP 02_12)", "a static local", "a loop that returns from inside",
                "INT_MAX from the task's <limits.h> (CASP 02_12)", "a union used through one member",
                "a bit-field read as written", "a prototyped helper defined after its use",
                "a recursive logic definition that decreases (spec-from-code)"]
#: Names whose meaning Frama-C's libc and the platform's headers disagree on
#: (``platform-names``; judged on the candidate's text as the preprocessor gives it back,
#: so only end to end): WP proves the first for RAND_MAX = 32767, gcc builds it with
#: 2147483647, so it returns 11 where the contract says 10.
PLATFORM_CHEATS = {
    "RAND_MAX": (STDLIB_TASK, C, "int clamp(int n) {\n  if (n < 10) return n;\n  return RAND_MAX < 40000 ? 10 : 11;\n}\n"),
    "errno": (STDLIB_TASK, C,
              "int clamp(int n) {\n  int vk_e = errno;\n  if (n < 10) return n;\n  return 10 + vk_e - vk_e;\n}\n"),
}
#: Code gcc reads otherwise than Frama-C (``compiler-agrees``, judged on gcc's diagnostics,
#: so only end to end): rule -> words of the detail, task, mode, output.
COMPILER_CHEATS = {
    "K&R definition": ("K&R", casp.KIT_CANARY, C, "long vk_id(x) long x; { return x; }\n"
                       "int twice(int n) {\n  return (int)vk_id(n + n);\n}\n"),
    "unsequenced side effects": ("unsequenced", casp.KIT_CANARY, C,
                                 "int twice(int n) {\n  int i = 0;\n  i = i++;\n  return n + n + i;\n}\n"),
    "a helper named like a libc function": ("C library", casp.KIT_CANARY, C,
                                            "int abs(int x) { return x; }\nint twice(int n) {\n  return abs(n + n);\n}\n"),
    "a global constant that overflows": ("overflows", casp.KIT_CANARY, C,
                                         "const int vk_k = 2147483647 + 1;\nint twice(int n) {\n  return vk_k;\n}\n"),
}
NEW_CANARIES = {"canary:builtin-attribute", "canary:reserved-name", "canary:variant-relation", "canary:huge-local",
                "canary:attribute", "canary:builtin-call", "canary:forward-goto", "canary:clause",
                "canary:pointer-cast", "canary:kr-definition", "canary:from-clause", "canary:unfounded-logic"}


def _e2e_items(casp_tasks) -> dict[str, list]:
    """The end-to-end cases: ``{"cheats", "honest", "canaries"}`` -> [(task, mode, output)]."""
    cheats, honest = {c[0]: c for c in CHEATS}, {h[0]: h for h in HONEST}
    t = casp.KIT_CANARY
    return {"cheats": [(_task(cheats[n][1], casp_tasks), cheats[n][2], cheats[n][3]) for n in CHEAT_PICKS],
            "honest": [(_task(honest[n][1], casp_tasks), honest[n][2], honest[n][3]) for n in HONEST_PICKS],
            "platform": list(PLATFORM_CHEATS.values()),
            "compiler": [x[1:] for x in COMPILER_CHEATS.values()],
            "canaries": [(t, mode, c.output) for mode in (C, S) for c, _ in casp.canaries([t], mode)
                         if c.model in NEW_CANARIES]}


@pytest.fixture(scope="module")
def batch(casp_tasks, framac_recorded, tmp_path_factory):
    """The end-to-end cases as ONE run (one task run per task), judged on the real
    Frama-C's recorded outputs (``framac_recorded``)."""
    return framac_recorded.run_items([x for items in _e2e_items(casp_tasks).values() for x in items],
                                     tmp_path_factory.mktemp("casp-allowlist"))


@pytest.mark.recorded
def test_cheats_are_rejected_end_to_end(casp_tasks, batch):
    """One cheat per class through WP and the judge. The first once verified (a body-less
    helper marked FC_BUILTIN was not in the view: its contract was assumed)."""
    items = {c[0]: c for c in CHEATS}
    recs = _run(batch, _e2e_items(casp_tasks)["cheats"])
    for name, rec in zip(CHEAT_PICKS, recs):
        assert rec["verdict"] == "rejected", (name, rec["verdict"], rec["reason"])
        assert items[name][4] in {c["name"] for c in rec["checks"] if not c["ok"]}, (name, rec["checks"])


@pytest.mark.recorded
def test_honest_neighbours_still_verify(casp_tasks, batch):
    """An attribute that changes nothing, a libc call the task's header declares, forward
    gotos, a union used through one member, a bit-field read as written, a prototyped
    helper (code-from-spec: verified, termination established), a recursive logic
    definition that decreases (spec-from-code: verified)."""
    recs = _run(batch, _e2e_items(casp_tasks)["honest"])
    for name, rec in zip(HONEST_PICKS, recs):
        assert rec["verdict"] == "verified", (name, rec["verdict"], rec["reason"])
        expected = ("not-checked",) if rec["mode"] == S else ("proved", "assumed")  # the code is the task's
        assert rec["verifier"]["extra"]["termination"] in expected, name


@pytest.mark.recorded
def test_names_the_platform_defines_otherwise_are_rejected(casp_tasks, batch):
    """A macro (or errno) whose meaning Frama-C's libc and this platform's headers disagree
    on (scripts/casp_libc.py compiles both): rejected by ``platform-names``, naming both
    values, from the gate (no WP run)."""
    recs = _run(batch, _e2e_items(casp_tasks)["platform"])
    for name, rec in zip(PLATFORM_CHEATS, recs):
        assert rec["verdict"] == "rejected", (name, rec["verdict"], rec["reason"])
        broken = {c["name"]: c["detail"] for c in rec["checks"] if not c["ok"]}
        assert name in broken.get("platform-names", ""), (name, broken)
    assert "32767" in recs[0]["reason"] and "2147483647" in recs[0]["reason"]


@pytest.mark.recorded
def test_code_gcc_reads_otherwise_is_rejected(casp_tasks, batch):
    """A K&R definition, unsequenced side effects, a helper named like a C library function
    (gcc keeps the library's meaning, Frama-C takes the file's), a global constant whose
    initialiser overflows (WP reads it as 2^31 and as an int): rejected by
    ``compiler-agrees`` from gcc's own diagnostics, at the gate (no WP run)."""
    recs = _run(batch, _e2e_items(casp_tasks)["compiler"])
    for (name, (words, *_)), rec in zip(COMPILER_CHEATS.items(), recs):
        assert rec["verdict"] == "rejected", (name, rec["verdict"], rec["reason"])
        broken = {c["name"]: c["detail"] for c in rec["checks"] if not c["ok"]}
        assert words in broken.get("compiler-agrees", ""), (name, broken)


@pytest.mark.realtool
def test_the_libc_allow_list_is_what_frama_c_and_gcc_give():
    """``harness/benchmarks/casp/libc_callees.json`` is what scripts/casp_libc.py derives
    today from the real Frama-C's libc contracts and the real gcc (exit 0 with --check)."""
    _framac()
    got = subprocess.run([sys.executable, str(Path(__file__).resolve().parents[1] / "scripts" / "casp_libc.py"),
                          "--check"], capture_output=True, text=True, timeout=300)
    assert got.returncode == 0, got.stdout + got.stderr
    assert "as derived" in got.stdout and "strrchr" not in allowlists.ALLOWED_LIBC_CALLEES
    assert {"strstr", "memcpy", "strtol", "sqrt", "exit"} <= set(allowlists.ALLOWED_LIBC_CALLEES)


@pytest.mark.recorded
def test_new_canaries_on_the_kit_pair(casp_tasks, batch):
    """The allow-list canaries (core.py canaries()) are written for any int-returning
    pair: on the kit's own pair (a user's dataset) they get their verdicts too."""
    t = casp.KIT_CANARY
    items = [(c, mode, exp) for mode in (C, S) for c, exp in casp.canaries([t], mode) if c.model in NEW_CANARIES]
    assert {c.model for c, _, _ in items} == NEW_CANARIES
    recs = _run(batch, _e2e_items(casp_tasks)["canaries"])
    for (c, _, exp), rec in zip(items, recs):
        assert rec["verdict"] in exp, (c.model, rec["verdict"], rec["reason"])


@pytest.mark.realtool
@pytest.mark.slow
def test_derivation_script_finds_every_honest_construct_allowed(casp_mirror, isolated_cache, tmp_path):
    """``scripts/casp_allowlists.py`` on the gold code, the gold contracts and the 40
    bundled specifications of casp-sample10: every construct they use is on the lists and
    no candidate breaks a new rule (exit 0); the numbers are those of harness/benchmarks/casp/docs.md."""
    _framac()
    out = tmp_path / "derive.json"
    root = Path(__file__).resolve().parents[1]
    proc = subprocess.run([sys.executable, str(root / "scripts" / "casp_allowlists.py"), "--json", str(out)],
                          cwd=root, env=dict(isolated_cache, PYTHONPATH=str(root)), capture_output=True, text=True,
                          timeout=1800)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    got = json.loads(out.read_text())
    assert (got["candidates"], got["parsed"], got["rejected"], got["not_allowed"]) == (60, 48, [], [])
    assert got["counts"]["callee"] == {"the task's": 3, "libc strlen": 1}
    assert got["max_local_bytes"] == 29


# --- the pieces, without the tool -----------------------------------------------------------


def test_a_view_without_the_new_keys_fails_closed():
    old = {"functions": [], "globals": []}
    checks = integrity.allowlist_checks(old, old, "f", C)
    assert checks and not any(c["ok"] for c in checks)
    assert "lacks" in checks[0]["detail"]


def test_gotos_fail_termination_only_when_they_form_a_loop():
    def view(gotos):
        return {"functions": [{"name": "f", "defined": True, "calls": [], "loops": [], "gotos": gotos, "noreturn": False}]}
    assert integrity.termination(view([{"line": 3, "cycle": False}]), "f", []) == ("proved", [])
    status, problems = integrity.termination(view([{"line": 3, "cycle": False}, {"line": 7, "cycle": True}]), "f", [])
    assert status == "failed" and problems == ["goto forming a loop in f() (line 7)"]
    assert integrity.termination(view([5]), "f", [])[0] == "failed"  # an older view: every goto counts


def test_reserved_names():
    for name in ("__fc_x", "__FC_x", "Frama_C_show_each", "__builtin_abs", "__e_acsl_x", "__gen_e_acsl_f",
                 "__VERIFIER_nondet_int", "verikit_x", "VERIKIT", "VeriKit_y"):
        assert allowlists.reserved_name(name), name
    for name in ("vk_helper", "fc_x", "frama_c", "builtin", "divmult", "__retres"):
        assert not allowlists.reserved_name(name), name
