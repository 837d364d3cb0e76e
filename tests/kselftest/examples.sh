#!/bin/sh
# The documentation's worked examples (Documentation/flex/examples/), run
# against the driver, so that what Documentation/flex/libflex.rst walks
# through is what the code does. Each runs on the PF and on a VF: the same
# program, with region_ids that are physical addresses on one and
# lookup-table indices on the other.
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
nok() { n=$((n + 1)); failed=1; echo "not ok $n - $1"; }

bin=${FLEX_KSFT_BIN:-}/../examples
sriov=/sys/class/flex/flex0/sriov_numvfs
echo "TAP version 13"
echo "1..2"
if [ ! -x "$bin/tiled_matmul" ]; then
	for i in 1 2; do echo "not ok $i - $bin/tiled_matmul not built"; done
	exit 1
fi

run() {	# run DESC NODE
	if out=$("$bin/tiled_matmul" "$2" 2>&1); then ok "$1: $out"
	else nok "$1: expected exit 0 and a result matching the CPU, got: $out"; fi
}

run "tiled_matmul on the PF" /dev/flex0
if echo 1 > "$sriov"; then
	run "tiled_matmul on a VF" /dev/flex0vf0
	echo 0 > "$sriov" || nok "disabling the VF"
else
	nok "tiled_matmul on a VF: could not enable a VF through $sriov"
fi
exit $failed
