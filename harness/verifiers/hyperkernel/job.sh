#!/bin/sh
# verikit: one OSVBench check (harness/verifiers/hyperkernel), as upstream's
#   make hv6-verify -- -v --failfast HV6.test_<syscall>
# (hv6/Makefrag: python2 $(O)/hv6/hv6py/kernel/spec/main.py $(ARGS) with
# PYTHONPATH=$PYTHONPATH:irpy:$(O)/hv6/), on this job's own copy of hv6py (first on the
# path; the image's build directory after it, for anything else it holds).
# Trusted: written by the kit, run by the sandbox in the job's scratch directory, which
# holds specs.py (the spec module: header + candidate).
# $1 = syscall, $2 = time limit of the check in seconds.
# Exit 90: the image lacks the Hyperkernel tree; 91: python2 or Z3 missing (ours, not the
# spec's); 124: timeout(1) stopped the check; otherwise the check's own status.
set -u
syscall="$1"
limit="$2"
hk="${VERIKIT_HK_ROOT:-/root/hyperkernel}"
z3py="${VERIKIT_Z3_PYTHON:-/root/Projects/z3-z3-4.5.0/build/python}"
mkdir -p o.x86_64/hv6 || exit 90
if ! cp -Rp "$hk/o.x86_64/hv6/hv6py" o.x86_64/hv6/hv6py; then
    echo "verikit: cannot copy $hk/o.x86_64/hv6/hv6py (is this OSVBench's Hyperkernel job image? 'verikit images build hyperkernel-osvbench')" >&2
    exit 90
fi
cp specs.py o.x86_64/hv6/hv6py/kernel/spec/spec/specs.py || exit 90
rm -f o.x86_64/hv6/hv6py/kernel/spec/spec/specs.pyc
ln -s "$hk/irpy" irpy || exit 90
PYTHONPATH="$z3py:irpy:o.x86_64/hv6/:$hk/o.x86_64/hv6/"
export PYTHONPATH
python2 -c 'import sys, z3; sys.stdout.write("verikit-probe: python %d.%d.%d z3 %s\n" % (tuple(sys.version_info[:3]) + (z3.get_version_string(),)))' 1>&2 || exit 91
if command -v timeout >/dev/null 2>&1; then
    exec timeout -k 10 "$limit" python2 o.x86_64/hv6/hv6py/kernel/spec/main.py -v --failfast "HV6.test_$syscall"
fi
echo "verikit: no timeout(1) in the image; the sandbox wall-time limit applies" >&2
exec python2 o.x86_64/hv6/hv6py/kernel/spec/main.py -v --failfast "HV6.test_$syscall"
