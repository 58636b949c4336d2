#!/bin/sh
# verikit Frama-C job (runs INSIDE the sandbox, in the job directory; POSIX sh).
#
# Not run by the package itself: harness/verifiers/framac/ ships this file with every
# Frama-C job as verikit_framac_job.sh, together with verikit_framac_view.ml (Frama-C's
# view of a file as JSON, see that file); their sha256 are part of the job options, so a
# change here invalidates cached results.
#
#   sh verikit_framac_job.sh FRAMA-C-ARGUMENTS...
#
# Steps, each only when its input file was shipped:
#   1. region.c (the text the candidate contributed, alone), three times through the
#      preprocessor Frama-C uses (gcc -E, Frama-C's libc, -nostdinc; -P): with -C (as
#      Frama-C runs it) into region.i, without -C into region-nc.i, and with
#      -fpreprocessed (tokenised only: comments dropped, no directive run, no line splice)
#      into region-tok.i. The kit requires region.i == region.c and region-nc.i ==
#      region-tok.i (whitespace aside), so a directive in any spelling (digraphs, line
#      splices, a comment before the #) shows as a change.
#   2. task.c (the task's fixed part): Frama-C's view of it, into task-view.json
#      (shipped alone: a task run, Job.task_run, made once per task and mode).
#   3. havoc.c (spec-from-code: the candidate's contract over a body that returns an
#      arbitrary value and assigns nothing): WP on the ensures clauses only, with the
#      arguments in $VERIKIT_HAVOC_ARGS, into havoc.log.
#   3b. sound.c (the task's fixed part + gold code): WP smoke tests only, into sound.log
#       (shipped alone: a task run, made once per task);
#       requires.c (spec-from-code): does the task's requires imply the candidate's?
#       WP on the call preconditions of a probe, into requires.log.
#   4. the verification itself: frama-c FRAMA-C-ARGUMENTS with the view of the verified
#      file written to view.json from the same parse (its exit status and output are the
#      job's). Without candidate.c (a task run) the job ends after step 3b.
#   5. vk_exec.conf (CASP's execution cross-check): verikit_exec_check.sh, into vk_exec.log,
#      before step 4 (the candidate's code runs after every side step that reads the kit's
#      files). When the job may use two CPUs or more (VERIKIT_CPUS), no step's prover ever
#      shares its CPU (WP's short prover limits are wall-clock limits: docs/performance.md):
#      steps 3b's requires.c, 3 and 5 run one after another beside step 4, whose WP starts
#      at the job's -wp-par and, once they have ended (the file vk-cpus-free), runs
#      VERIKIT_CPUS provers at a time (verikit_framac_wp_cpus.ml); when step 4 ends first
#      (vk-wp-done), the WP run of step 3b or 3 under way, or the next one, does. Step 3b's
#      sound.c runs VERIKIT_CPUS smoke tests at a time.
# A requires.log already in the job directory is the gate's (the same probe on the same
# requires.c, shipped by the executor: FramaC.carry_from_gate): not made again.
# Steps 2, 3 and 3b, and the gate's view, start Frama-C with only the plug-ins they use
# (fc, below); step 4 is the paper's command and loads every plug-in.
#
# Once per run (sh verikit_framac_job.sh --prepare; harness/verifiers/framac/
# FramaC.prepare): what every job would otherwise build again, each kept only when it builds:
# Frama-C's share and library paths in verikit_framac_paths (each a Frama-C start, read by every
# step that needs them), the view script compiled into verikit_framac_view.cmxs (the compiler command Frama-C itself
# runs for -load-script, which compiles into the job directory and deletes the result after
# each start: about half a second per start), and E-ACSL's runtime object vk_rtl.o (see
# verikit_exec_check.sh). A job that has verikit_framac_view.cmxs loads it, else the script.
#
# The gate (VERIKIT_GATE=1; the executor's first run of a candidate, see
# harness/verifiers/framac/ FramaC.gate): step 1, then Frama-C's view of the verified
# file (the last argument) from a parse only, and the requires probe of step 3b (WP on
# requires.c: the task's requires and the candidate's, nothing of the candidate run; before
# the view, or beside it when the job may use two CPUs), and nothing else: no WP on the
# verified file, no other side run, no execution. It writes
# vk-gate so that its output is never read as a verification's. The judge compares that
# view with the task's (step 2, from the task run); harness/verifiers/framac/
# FramaC.command_after_gate reads the view and the probe to choose the smoke tests.
set -u
if [ "${1:-}" = --prepare ]; then
  lib=$(frama-c -print-lib-path)
  share=$(frama-c -print-share-path) && [ -n "$lib" ] && [ -n "$share" ] \
    && printf "share='%s'\nlib='%s'\n" "$share" "$lib" >verikit_framac_paths
  # -S -dstartup, no -g: the same bytes from every build (no temporary file names, no
  # paths), so that jobs made from two builds have the same files and the same keys
  ocamlfind ocamlopt -shared -S -dstartup -o verikit_framac_view.cmxs -w -a -w -70 -warn-error a \
    -I "$lib" -I "$lib/plugins" verikit_framac_view.ml || rm -f verikit_framac_view.cmxs
  ocamlfind ocamlopt -shared -S -dstartup -o verikit_framac_wp_cpus.cmxs -w -a -w -70 -warn-error a \
    -I "$lib" -I "$lib/plugins" verikit_framac_wp_cpus.ml || rm -f verikit_framac_wp_cpus.cmxs
  VK_PREPARE=1 sh verikit_exec_check.sh
  exit 0
fi
view=verikit_framac_view.cmxs
[ -f "$view" ] || view=verikit_framac_view.ml
# fc NAME PLUG-INS FRAMA-C-ARGUMENTS...: one of the kit's own Frama-C steps (a view, a side
# WP run), with only Variadic (its translation of variadic calls is part of every parse)
# and PLUG-INS (",frama-c-wp": findlib names, each after a comma) loaded: a start then
# costs 0.07-0.12 s here, against 0.25 s with every plug-in loaded (Frama-C's default). A
# run that fails so (exit status not 0: e.g. an ACSL extension that a plug-in left out
# defines is a parse error) is made again with every plug-in, and only that run's output,
# files and exit status are the step's. NAME names the first run's output files
# (vk-NAME.out/.err), so that side steps never share them. The verification itself (the
# paper's command) loads every plug-in.
fc() {
  name=$1 plugins=$2
  shift 2
  if frama-c -no-autoload-plugins -load-module "frama-c-variadic$plugins" "$@" >"vk-$name.out" 2>"vk-$name.err"; then
    cat "vk-$name.out"; cat "vk-$name.err" >&2; rm -f "vk-$name.out" "vk-$name.err"
    return 0
  fi
  rm -f "vk-$name.out" "vk-$name.err" ${VERIKIT_VIEW:+"$VERIKIT_VIEW"}
  frama-c "$@"
}
# Frama-C's view of FILE into OUT (parse_view OUT FILE), from a parse only.
parse_view() {
  (VERIKIT_VIEW=$1; export VERIKIT_VIEW; fc "${1%.json}" "" -load-module "$view" "$2")
}
if [ -f verikit_framac_paths ]; then
  . ./verikit_framac_paths
else
  share=$(frama-c -print-share-path 2>/dev/null || echo /usr/share/frama-c)
fi
if [ -f region.c ]; then
  pp="gcc -E -P -I. -I$share/libc -D__FRAMAC__ -nostdinc"
  { $pp -C region.c -o region.i || echo "verikit: the preprocessor exited $?" >&2; } 2>>region.err
  { $pp region.c -o region-nc.i || echo "verikit: the preprocessor exited $?" >&2; } 2>>region.err
  { $pp -fpreprocessed region.c -o region-tok.i || echo "verikit: the preprocessor exited $?" >&2; } 2>>region.err
  if [ -f candidate.c ]; then
    LC_ALL=C gcc -fsyntax-only -fdiagnostics-plain-output -Wold-style-definition -Wsequence-point \
      -Wbuiltin-declaration-mismatch candidate.c >compiler.log 2>&1 || echo "verikit: gcc exited $?" >>compiler.log
  fi
fi
if [ -f task.c ]; then
  parse_view task-view.json task.c >task-view.log 2>&1
fi
# --- requires not stronger than the task's (integrity.py requires_check) ---
# requires.c = the candidate's contract on a declaration of the target, and a probe with
# the task's own contract that calls it: WP on the call's requires only, into requires.log.
requires_run() {
  if [ -f requires.c ] && [ ! -f requires.log ]; then
    # shellcheck disable=SC2086  # word splitting of the argument list is intended
    fc requires ,frama-c-wp $wp_cpus ${VERIKIT_REQUIRES_ARGS:-} requires.c >requires.log 2>&1
  fi
}
# 5. CASP execution cross-check (harness/benchmarks/casp/execution.py): writes vk_exec.log
exec_run() {
  if [ -f vk_exec.conf ]; then
    sh verikit_exec_check.sh >vk_exec.err 2>&1
  fi
}
# With two CPUs or more for this job (VERIKIT_CPUS, the executor's; one by default), the
# steps use them (the layout above: $par, $side_pid). Each step writes only its own files,
# so what the job computes is the same either way.
two_cpus() { [ "${VERIKIT_CPUS:-1}" -ge 2 ] 2>/dev/null; }
par=""
if two_cpus; then par="-wp-par $VERIKIT_CPUS"; fi
side_pid=""
# The arguments that load the module giving a WP run the job's CPUs once the file named by
# VERIKIT_WP_CPUS_FREE exists, where the prepare step built it ($raise); given ($wp_cpus)
# only to a WP run that goes beside another step (see below)
raise=""
[ ! -f verikit_framac_wp_cpus.cmxs ] || raise="-load-module verikit_framac_wp_cpus.cmxs"
wp_cpus=""
# The job's end: exit status RC (finish RC), once the side steps have ended.
finish() {
  [ -z "$side_pid" ] || wait "$side_pid"
  exit "$1"
}
# The job's last step: Frama-C on ARGUMENTS with its view of the verified file written to
# view.json; its exit status and output are the job's. With side steps beside it, its WP
# takes the job's CPUs once they have ended (vk-cpus-free).
last() {
  if [ -z "$side_pid" ]; then
    VERIKIT_VIEW=view.json exec frama-c -load-module "$view" "$@"
  fi
  wp_cpus=$raise
  # shellcheck disable=SC2086  # word splitting of $wp_cpus is intended
  VERIKIT_VIEW=view.json VERIKIT_WP_CPUS_FREE=vk-cpus-free frama-c -load-module "$view" $wp_cpus "$@"
  rc=$?
  : >vk-wp-done
  finish $rc
}
if [ "${VERIKIT_GATE:-}" = 1 ]; then
  : >vk-gate
  for source; do :; done  # the verified file: the last argument
  if two_cpus; then  # step 3b's requires probe (the task's and the candidate's requires only)
    requires_run &
    side_pid=$!
  else
    requires_run
  fi
  parse_view view.json "$source"
  finish $?
fi
# step 3: the do-nothing-body run (havoc.c)
havoc_run() {
  if [ -f havoc.c ]; then
    # shellcheck disable=SC2086  # word splitting of the argument list is intended
    fc havoc ,frama-c-wp $wp_cpus ${VERIKIT_HAVOC_ARGS:-} havoc.c >havoc.log 2>&1
  fi
}
# With two CPUs, the requires run, the do-nothing-body run and the execution cross-check one
# after another beside the verification, then vk-cpus-free: the verification's WP takes
# both CPUs from there; and when the verification ends first (vk-wp-done), the side WP run
# under way takes them. The cross-check, which runs the candidate's code in this directory,
# comes last either way. (That code could write either file early; it could as well start
# busy processes of its own beside WP: the same CPUs shared, nothing more.)
if [ -n "$par" ] && [ -f candidate.c ]; then
  {
    wp_cpus=$raise VERIKIT_WP_CPUS_FREE=vk-wp-done
    export VERIKIT_WP_CPUS_FREE
    requires_run; havoc_run; exec_run; : >vk-cpus-free
  } &
  side_pid=$!
else
  havoc_run
fi
# --- task soundness (harness/benchmarks/casp/integrity.py task_soundness) ---
# sound.c = the task's fixed part with its gold code: WP smoke tests only (requires,
# behaviours' assumes, calls; the prelude's contracts and axioms are hypotheses of each)
# into sound.log, with the arguments in $VERIKIT_SOUND_ARGS.
# With two CPUs or more, its smoke tests run that many at a time (-wp-par, the last given
# wins): each waits out its prover's limit on a CPU of its own, as it does alone.
if [ -f sound.c ]; then
  # shellcheck disable=SC2086  # word splitting of the argument list is intended
  fc sound ,frama-c-wp ${VERIKIT_SOUND_ARGS:-} $par sound.c >sound.log 2>&1
fi
# --- end of the soundness steps ---
[ -f candidate.c ] || exit 0  # a task run (Job.task_run): its side files are its output
if [ -z "$side_pid" ]; then
  requires_run
  exec_run
fi
last "$@"
