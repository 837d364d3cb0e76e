#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# make check's short fuzzing run: flex_fuzz (tests/fuzz/flex_fuzz.c) for
# FLEX_FUZZ_SECONDS (default 25) with a fresh seed, printed first
# (`fuzz: seed S`). Installed as build/kselftest/fuzz_short, so
# tests/kselftest/run-all runs it with the other driver tests, on the stock
# kernel (make check) and on the debug one (make check-debug).
# Replay a failure with `make fuzz FUZZ_SEED=S FUZZ_SECONDS=25`.
bin=$(dirname "$0")/../fuzz/flex_fuzz
if [ ! -x "$bin" ]; then
	echo "not ok 1 - $bin is not built (make kselftests builds it)"
	exit 1
fi
exec "$bin" --seconds "${FLEX_FUZZ_SECONDS:-25}" ${FLEX_FUZZ_SEED:+--seed "$FLEX_FUZZ_SEED"}
