#!/bin/sh
# verikit CASP execution cross-check (runs INSIDE the sandbox, in the job directory; POSIX sh).
#
# Shipped by harness/verifiers/framac/ as verikit_exec_check.sh and started by
# verikit_framac_job.sh when the job has vk_exec.conf (see
# harness/benchmarks/casp/execution.py for the files and for how the log is read).
# Writes vk_exec.log:
#   info KEY VALUE                    compilers and flags used
#   build NAME ok|failed              one per build; "| message" lines follow a failure
#   unchecked TEXT                    annotations E-ACSL could not translate
#   @ BUILD MUTANT INPUT RC           one per run; "> stdout line", "! stderr lines" follow
# Builds: ea (E-ACSL + gcc -O0), gcc-O0, gcc-O2, clang-O0, clang-O2 (sanitizers, when the
# compiler exists), gold-* (the task's gold, only when the verified file does not build),
# mut (spec-from-code: E-ACSL over the mutant dispatcher, the candidate's contract), mutg
# (the same mutants under the task's own contract: the reference for "vacuous").
set -u
if [ -f verikit_framac_paths ]; then  # Frama-C's share and library paths (the job driver's --prepare)
  . ./verikit_framac_paths
else
  share=$(frama-c -print-share-path 2>/dev/null || echo /usr/share/frama-c)
  lib=$(frama-c -print-lib-path 2>/dev/null || echo /usr/lib/frama-c)
fi
ea="$share/e-acsl"
ealib=$lib/e-acsl/libeacsl-dlmalloc.a
eaflags="-std=c99 -m64 -g -O0 -fno-builtin -fno-merge-constants -Wno-attributes -DE_ACSL_SEGMENT_MMODEL -DE_ACSL_FAIL_EXITCODE=4 -I$ea"
# VK_PREPARE=1 (the job driver's --prepare, once per run): E-ACSL's runtime object only,
# which depends on the toolchain alone; a job that has vk_rtl.o does not build it again
if [ "${VK_PREPARE:-}" = 1 ]; then
  # the build directory mapped away: the same bytes from every build
  [ -f "$ea/e_acsl_rtl.c" ] && gcc $eaflags -fdebug-prefix-map="$PWD"=. -c -o vk_rtl.o "$ea/e_acsl_rtl.c" \
    >/dev/null 2>&1 || rm -f vk_rtl.o
  exit 0
fi
. ./vk_exec.conf
log=vk_exec.log
: >"$log"
sanflags="-fsanitize=undefined,address -fno-sanitize-recover=all -fno-omit-frame-pointer -w"
if ! command -v gcc >/dev/null 2>&1 || [ ! -f "$ea/e_acsl_rtl.c" ]; then
  echo "info missing gcc or E-ACSL's runtime ($ea)" >>"$log"; exit 0
fi
compilers=gcc
for c in clang clang-14; do
  if command -v "$c" >/dev/null 2>&1; then compilers="gcc $c"; break; fi
done
echo "info compilers $compilers" >>"$log"
echo "info flags sanitizers: $sanflags; e-acsl: $eaflags" >>"$log"
ASAN_OPTIONS=detect_leaks=0:exitcode=5:allocator_may_return_null=1
UBSAN_OPTIONS=halt_on_error=1:exitcode=6:print_stacktrace=0
export ASAN_OPTIONS UBSAN_OPTIONS

msgs() { grep -E 'rror|undefined reference' "$1" | head -n 5 | sed 's/^/| /' >>"$log"; }

# E-ACSL: instrument SRC into OUT.c, compile into OUT. Returns non-zero on failure.
# With a fourth argument "init", Frama-C's RTE first puts an \initialized assertion on every
# read of a local or through a pointer in the verified file's functions (VK_FUNCTIONS: the
# target first) and E-ACSL checks those and these functions' contracts; without it only the
# target's annotations (its contract, its loop annotations) are checked (the mutant builds:
# a mutant's uninitialised read is not its contract rejecting it; the task's gold, whose
# build only tells a slow input or a task that does not build).
eabuild() {
  name=$1 src=$2 out=$3 funcs=$VK_TARGET rte=""
  if [ "${4:-}" = init ]; then
    funcs=${VK_FUNCTIONS:-$VK_TARGET}
    rte="-rte -rte-select=$funcs -rte-initialized=$funcs -rte-no-mem -rte-no-div -rte-no-shift -rte-no-float-to-int"
    rte="$rte -rte-no-pointer-call -no-warn-signed-overflow -then"
  fi
  # E-ACSL 25 crashes translating some libc contracts (labs: mkBinOp on an mpz) when it
  # checks every function, hence the list;
  # bounded: E-ACSL 25 can run for minutes on some contracts (a recursive logic definition)
  # first with only the plug-ins this run uses (and Variadic, part of the parse): about a
  # quarter of a second less than with every plug-in loaded; a run that fails so (an ACSL
  # extension of a plug-in not loaded) is made again with every plug-in
  for plugins in "-no-autoload-plugins -load-module frama-c-variadic,frama-c-rtegen,frama-c-e_acsl" ""; do
    # shellcheck disable=SC2086  # word splitting of the plug-in arguments is intended
    timeout 60 frama-c $plugins "$src" $rte -e-acsl -e-acsl-functions="$funcs" -then-last -print -ocode "$out.c" \
      >"$out.fc.log" 2>&1
    st=$?
    { [ "$st" -eq 0 ] || [ "$st" -eq 124 ]; } && break
  done
  [ "$st" -eq 124 ] && echo "Error: E-ACSL did not finish within 60 s" >>"$out.fc.log"
  if [ "$st" -eq 0 ] \
     && gcc $eaflags -o "$out" "$out.c" vk_rtl.o "$ealib" -l:libgmp.so.10 -lm -lpthread >"$out.cc.log" 2>&1; then
    echo "build $name ok" >>"$log"
    grep -A2 'not yet supported\|Ignoring annotation' "$out.fc.log" | tr -s ' \n' ' ' | sed 's/--/\n/g' \
      | sed -n 's/.*\(E-ACSL construct[^.]*\).*/unchecked \1/p' | sort -u >>"$log"
    return 0
  fi
  echo "build $name failed" >>"$log"
  msgs "$out.fc.log"; [ -f "$out.cc.log" ] && msgs "$out.cc.log"
  return 1
}

# runs BUILD BINARY MUTANT STOP INPUT...: one process runs the inputs (a forked child each,
# see the driver's docstring in exec_driver.py); its "= input status" lines and the stderr
# between its "= input" markers become one "@" entry per input in the log. Leaves in
# vk_stop "INPUT STATUS" of the last input run (a timeout, status 124, is always the last),
# in vk_ok the inputs that ended with status 0 and no E-ACSL error, in vk_bad how many
# failed otherwise than by a timeout or the target's own precondition (a drawn input
# outside the requires: discarded), in vk_killed how many had an E-ACSL error other than
# the target's precondition.
runs() {
  b=$1 bin=$2 m=$3 stop=$4
  shift 4
  : >vk_stop; : >vk_ok; echo 0 >vk_bad; echo 0 >vk_killed
  [ "$#" -gt 0 ] || return 0
  timeout $(($# * VK_TIMEOUT + 30)) "./$bin" "$m" "$stop" "$@" >vk_o.txt 2>vk_e.txt
  awk -v b="$b" -v m="$m" -v rc=$? -v target="$VK_TARGET" -v logf="$log" '
    FNR == 1 { f++ }
    f == 1 { if ($1 == "=" && NF == 2) { cur = $2; last = $2; n[cur] = 0; next }
             if (cur == "") next
             if (n[cur] < 12) { err[cur] = err[cur] "! " substr($0, 1, 300) "\n"; n[cur]++ }
             if (index($0, "Error: ")) erracsl[cur] = 1
             if (index($0, "Error: Precondition failed")) pre[cur] = 1
             if (index($0, "In function '\''" target "'\''")) intarget[cur] = 1
             next }
    $1 == "=" && NF == 3 { entry($2, $3); out = ""; got = 0; next }
    !got { out = $0; got = 1 }
    function entry(i, st) {
      printf "@ %s %s %s %s\n", b, m, i, st >>logf
      if (out != "") print "> " substr(out, 1, 400) >>logf
      printf "%s", err[i] >>logf
      done[i] = 1; lasti = i; lastrc = st
      if (st == 0 && !erracsl[i]) ok = ok " " i
      else if (!(pre[i] && intarget[i]) && st != 124) bad++
      if (erracsl[i] && !(pre[i] && intarget[i])) killed++
    }
    END { if (last != "" && !(last in done)) { out = ""; entry(last, rc == 0 ? 3 : rc) }
          if (lasti != "") print lasti, lastrc >"vk_stop"
          print ok >"vk_ok"; print bad + 0 >"vk_bad"; print killed + 0 >"vk_killed" }' vk_e.txt vk_o.txt
}
# did the last runs fail (a failure or a timeout)?
failed() { [ "$(cat vk_bad)" -gt 0 ] || { read -r _i _rc <vk_stop && [ "$_rc" -eq 124 ]; }; }
# the inputs after INPUT, up to VK_N - 1
after() { awk -v i="$1" -v n="$VK_N" 'BEGIN { for (k = i + 1; k < n; k++) printf "%d ", k }'; }

[ -f vk_rtl.o ] || gcc $eaflags -c -o vk_rtl.o "$ea/e_acsl_rtl.c" >vk_rtl.log 2>&1 \
  || { echo "build rtl failed" >>"$log"; msgs vk_rtl.log; }
if eabuild ea vk_exec_run.c vk_ea init; then
  todo=$(after -1)
  ok=""
  while [ -n "$todo" ]; do
    runs ea vk_ea 0 t $todo
    ok="$ok $(cat vk_ok)"
    [ "$(cat vk_bad)" -eq 0 ] || exit 0  # a violation or a crash: refuted, nothing more to run
    todo=""
    read -r li lrc <vk_stop || break
    [ "$lrc" -eq 124 ] || break
    # a timeout is not the candidate's doing when the task's gold times out on that input too
    if { [ -x vk_gold_ea ] || eabuild gold-ea vk_exec_gold.c vk_gold_ea; } \
       && timeout $((VK_TIMEOUT + 30)) ./vk_gold_ea 0 t "$li" 2>/dev/null | grep -q "^= $li 124\$"; then
      echo "slow $li" >>"$log"
      todo=$(after "$li")
    else
      exit 0  # refuted by the timeout
    fi
  done
else
  eabuild gold-ea vk_exec_gold.c vk_gold_ea
  exit 0
fi
for cc in $compilers; do
  for o in O0 O2; do
    b="${cc%-14}-$o"
    if $cc -$o -g $sanflags -o "vk_$b" vk_exec_run.c >"vk_$b.log" 2>&1; then
      echo "build $b ok" >>"$log"
      runs "$b" "vk_$b" 0 f $ok
      ! failed || exit 0
    else
      echo "build $b failed" >>"$log"; msgs "vk_$b.log"
      if $cc -$o -g $sanflags -o vk_gold vk_exec_gold.c >vk_gold.log 2>&1; then echo "build gold-$b ok" >>"$log"; exit 0; fi
      echo "build gold-$b failed" >>"$log"
    fi
  done
done
if [ -f vk_exec_mut.c ] && [ -n "$ok" ] && [ "${VK_M:-0}" -gt 0 ] && eabuild mut vk_exec_mut.c vk_mut; then
  runs mut vk_mut 0 n $ok
  killed=""
  m=1
  while [ "$m" -le "$VK_M" ]; do
    # killed (a contract failure) or timed out (its behaviour changed): the next mutant
    runs mut vk_mut "$m" e $ok
    [ "$(cat vk_killed)" -eq 0 ] || killed=1
    m=$((m + 1))
  done
  # the task's own contract over the same mutants, on every drawn input (its own requires):
  # only needed when the candidate's contract killed no mutant (the reference for "vacuous")
  if [ -z "$killed" ] && [ -f vk_exec_mutg.c ] && eabuild mutg vk_exec_mutg.c vk_mutg; then
    m=1
    while [ "$m" -le "$VK_M" ]; do
      runs mutg vk_mutg "$m" t $(after -1)
      m=$((m + 1))
    done
  fi
fi
exit 0
