#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The torch lane, run inside the VM (make check-torch boots it with
# tools/flex-vm, flex.ko loaded):
#
#   tests/torch/run.sh [TORCH_FLEX_DIR [RESULTS_DIR [SUITE_OPTIONS...]]]
#
# Enables one VF, runs tests/torch/test_torch_flex.py with Debian's
# /usr/bin/python3 (PyTorch 1.13) and TORCH_FLEX_DIR (default:
# build/torch-flex of this tree) on PYTHONPATH, so that torch_flex sees the
# PF as device 0 and the VF as device 1, then disables the VF. TAP goes to
# RESULTS_DIR (default: $FLEX_VM_OUT, else build/results-torch) and to
# stdout: torch.tap (the suite: one case per operator, dtype and device)
# and torch-lane.tap (enabling and disabling the VF, whether the suite ran
# to its end). If the suite dies (a crash in the extension, its per-case
# watchdog), the case it was in fails and the ones after it are reported
# as skipped, by the names it wrote to torch.cases first. Exits 1 on any
# failure. SUITE_OPTIONS go to the suite (--match, --no-big, --timeout).
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
torchdir=${1:-$top/build/torch-flex}
results=${2:-${FLEX_VM_OUT:-$top/build/results-torch}}
if [ $# -ge 2 ]; then shift 2; else shift $#; fi
python=/usr/bin/python3
sriov=/sys/class/flex/flex0/sriov_numvfs
vfnode=/dev/flex0vf0
suite=$results/torch.tap
lane=$results/torch-lane.tap
cases=$results/torch.cases
mkdir -p "$results" || exit 1
rm -f "$suite" "$lane" "$cases" "$results/torch.rc"
status=0
n=0

lane_ok() {
	n=$((n + 1))
	echo "ok $n - $1" >>"$lane"
}
lane_fail() {	# lane_fail DESC [DIAGNOSTIC]
	n=$((n + 1))
	echo "not ok $n - $1" >>"$lane"
	[ -z "${2:-}" ] || printf '%s\n' "$2" | sed 's/^/# /' >>"$lane"
	status=1
}
finish() {
	echo "1..$n" >>"$lane"
	echo "# ---- torch-lane"
	cat "$lane"
	exit $status
}
: >"$lane"

if [ ! -d "$torchdir/torch_flex" ]; then
	lane_fail "torch_flex is built" "no $torchdir/torch_flex: make torch-flex"
	finish
fi

vf=0
if [ ! -e "$sriov" ]; then
	lane_fail "enable a VF" "no $sriov: is flex.ko loaded?"
elif err=$({ echo 1 >"$sriov"; } 2>&1); then
	vf=1
	tries=50
	while [ ! -e "$vfnode" ] && [ $tries -gt 0 ]; do
		sleep 0.1
		tries=$((tries - 1))
	done
	if [ -e "$vfnode" ]; then
		lane_ok "enable a VF: echo 1 > $sriov gives $vfnode"
	else
		lane_fail "enable a VF" "echo 1 > $sriov succeeded, but no $vfnode after 5 s"
	fi
else
	lane_fail "enable a VF" "echo 1 > $sriov: $err"
fi

echo "# ---- torch: PYTHONPATH=$torchdir $python $here/test_torch_flex.py $*"
# The suite streams its TAP (tee) while it runs; its exit status comes
# back through a file, since a pipeline's status is tee's.
{
	PYTHONPATH=$torchdir${PYTHONPATH:+:$PYTHONPATH} "$python" "$here/test_torch_flex.py" \
		--cases "$cases" "$@"
	echo $? >"$results/torch.rc"
} | tee "$suite"
rc=$(cat "$results/torch.rc" 2>/dev/null || echo "?")

plan=$(sed -n 's/^1\.\.\([0-9][0-9]*\)$/\1/p' "$suite" | head -n 1)
ran=$(grep -c -E '^(not )?ok [0-9]+' "$suite")
if [ -z "$plan" ]; then
	echo "not ok 1 - the suite: exited with status $rc before printing its plan" | tee -a "$suite"
	lane_fail "the suite ran to its end" "exit status $rc, no plan"
elif [ "$ran" -lt "$plan" ]; then
	# It died in case ran+1: that one fails, the rest did not run.
	k=$((ran + 1))
	name=$(awk -F '\t' -v k=$k '$1 == k { print $2 }' "$cases" 2>/dev/null)
	{
		echo "not ok $k - ${name:-case $k}: the suite died here (exit status $rc;" \
			"1 with a Python stack on stderr: the watchdog or an exception; 128+N: signal N)"
		i=$((k + 1))
		while [ $i -le "$plan" ]; do
			name=$(awk -F '\t' -v k=$i '$1 == k { print $2 }' "$cases" 2>/dev/null)
			echo "ok $i - ${name:-case $i} # SKIP not run: the suite died in case $k"
			i=$((i + 1))
		done
	} | tee -a "$suite"
	lane_fail "the suite ran to its end" "exit status $rc after $ran of $plan cases"
elif [ "$rc" = 0 ] || [ "$rc" = 1 ]; then
	lane_ok "the suite ran to its end ($ran cases, exit status $rc)"
else
	lane_fail "the suite ran to its end" "all $plan cases reported, but exit status $rc"
fi
[ "$rc" = 0 ] || status=1

if [ $vf = 1 ]; then
	if err=$({ echo 0 >"$sriov"; } 2>&1); then
		lane_ok "disable the VF: echo 0 > $sriov"
	else
		lane_fail "disable the VF" "echo 0 > $sriov: $err"
	fi
fi
finish
