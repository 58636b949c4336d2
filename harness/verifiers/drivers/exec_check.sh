#!/bin/sh
# verikit CASP execution cross-check (runs INSIDE the sandbox, in the job directory; POSIX sh).
#
# Shipped by harness/verifiers/framac.py as verikit_exec_check.sh and started by
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
. ./vk_exec.conf
log=vk_exec.log
: >"$log"
share=$(frama-c -print-share-path 2>/dev/null || echo /usr/share/frama-c)
ea="$share/e-acsl"
ealib=$(frama-c -print-lib-path 2>/dev/null || echo /usr/lib/frama-c)/e-acsl/libeacsl-dlmalloc.a
eaflags="-std=c99 -m64 -g -O0 -fno-builtin -fno-merge-constants -Wno-attributes -DE_ACSL_SEGMENT_MMODEL -DE_ACSL_FAIL_EXITCODE=4 -I$ea"
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
eabuild() {
  name=$1 src=$2 out=$3
  # only the target's annotations (its contract, its loop annotations): E-ACSL 25 crashes
  # translating some libc contracts (labs: mkBinOp on an mpz) when it checks every function
  # bounded: E-ACSL 25 can run for minutes on some contracts (a recursive logic definition)
  timeout 60 frama-c -e-acsl -e-acsl-functions="$VK_TARGET" "$src" -then-last -print -ocode "$out.c" >"$out.fc.log" 2>&1
  st=$?
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

# run BUILD BINARY MUTANT INPUT: one process per input, its status and output in the log.
run() {
  timeout "$VK_TIMEOUT" "./$2" "$4" "$3" >vk_o.txt 2>vk_e.txt
  rc=$?
  echo "@ $1 $3 $4 $rc" >>"$log"
  head -n 1 vk_o.txt | cut -c1-400 | sed 's/^/> /' >>"$log"
  head -n 12 vk_e.txt | cut -c1-300 | sed 's/^/! /' >>"$log"
  return $rc
}

gcc $eaflags -c -o vk_rtl.o "$ea/e_acsl_rtl.c" >vk_rtl.log 2>&1 || { echo "build rtl failed" >>"$log"; msgs vk_rtl.log; }
ok=""
if eabuild ea vk_exec_run.c vk_ea; then
  i=0
  while [ "$i" -lt "$VK_N" ]; do
    run ea vk_ea 0 "$i"
    rc=$?
    if [ "$rc" -eq 0 ] && ! grep -q 'Error: ' vk_e.txt; then
      ok="$ok $i"
    elif [ "$rc" -eq 124 ] && { [ -x vk_gold_ea ] || eabuild gold-ea vk_exec_gold.c vk_gold_ea; } \
         && { timeout "$VK_TIMEOUT" ./vk_gold_ea "$i" >/dev/null 2>&1; [ $? -eq 124 ]; }; then
      echo "slow $i" >>"$log"  # the task's gold times out on this input too: not the candidate's doing
    elif ! grep -q "Error: Precondition failed" vk_e.txt || ! grep -q "In function '$VK_TARGET'" vk_e.txt; then
      exit 0  # a violation, a crash or a timeout: the record is refuted, nothing more to run
    fi
    i=$((i + 1))
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
      for i in $ok; do run "$b" "vk_$b" 0 "$i" || exit 0; done
    else
      echo "build $b failed" >>"$log"; msgs "vk_$b.log"
      if $cc -$o -g $sanflags -o vk_gold vk_exec_gold.c >vk_gold.log 2>&1; then echo "build gold-$b ok" >>"$log"; exit 0; fi
      echo "build gold-$b failed" >>"$log"
    fi
  done
done
if [ -f vk_exec_mut.c ] && [ -n "$ok" ] && [ "${VK_M:-0}" -gt 0 ] && eabuild mut vk_exec_mut.c vk_mut; then
  for i in $ok; do run mut vk_mut 0 "$i"; done
  killed=""
  m=1
  while [ "$m" -le "$VK_M" ]; do
    for i in $ok; do
      run mut vk_mut "$m" "$i"
      rc=$?
      # killed (a contract failure) or timed out (its behaviour changed): next mutant
      if grep -q 'Error: ' vk_e.txt; then killed=1; break; fi
      if [ "$rc" -eq 124 ]; then break; fi
    done
    m=$((m + 1))
  done
  # the task's own contract over the same mutants, on every drawn input (its own requires):
  # only needed when the candidate's contract killed no mutant (the reference for "vacuous")
  if [ -z "$killed" ] && [ -f vk_exec_mutg.c ] && eabuild mutg vk_exec_mutg.c vk_mutg; then
    m=1
    while [ "$m" -le "$VK_M" ]; do
      i=0
      while [ "$i" -lt "$VK_N" ]; do
        run mutg vk_mutg "$m" "$i"
        rc=$?
        if { grep -q 'Error: ' vk_e.txt && ! grep -q 'Error: Precondition failed' vk_e.txt; } || [ "$rc" -eq 124 ]; then break; fi
        i=$((i + 1))
      done
      m=$((m + 1))
    done
  fi
fi
exit 0
