#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The fuzzer's volume run: flex_fuzz --volume (tests/fuzz/flex_fuzz.c),
# whose operation mix is weighted towards the ioctls, until it has issued
# FLEX_FUZZ_IOCTLS ioctls: 1,000,000 under the debug kernel (make
# check-debug; recognised by /sys/kernel/debug/kmemleak) and 100,000 under
# the stock one (make check). Not reaching the count within
# FLEX_FUZZ_LIMIT seconds (default 1800) fails the run. Installed as
# build/kselftest/fuzz_volume; tests/kselftest/run-all runs it. Replay a
# failure with `make fuzz FUZZ_SEED=S FUZZ_ARGS="--volume --ioctls N"`.
bin=$(dirname "$0")/../fuzz/flex_fuzz
if [ ! -x "$bin" ]; then
	echo "not ok 1 - $bin is not built (make kselftests builds it)"
	exit 1
fi
if [ -e /sys/kernel/debug/kmemleak ]; then
	ioctls=${FLEX_FUZZ_IOCTLS:-1000000}
else
	ioctls=${FLEX_FUZZ_IOCTLS:-100000}
fi
exec "$bin" --volume --ioctls "$ioctls" --seconds "${FLEX_FUZZ_LIMIT:-1800}" \
	${FLEX_FUZZ_SEED:+--seed "$FLEX_FUZZ_SEED"}
