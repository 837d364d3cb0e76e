#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# trinity (Debian's system call fuzzer) aimed at the flex device nodes, in
# the VM lane with flex.ko loaded, as root (it drops to nobody itself here).
#
#   trinity.sh [SYSCALLS [SECONDS [SEED]]]
#
# Enables 2 VFs, hard-links /dev/flex0 and its VFs into a directory of their
# own (trinity's -V walks one path and does not cross into /dev from
# elsewhere), makes them world-accessible for the run, and runs trinity as
# nobody (it refuses root) with only the "pseudo" fd provider, so every fd
# it fuzzes is a flex file: SYSCALLS (default 20000) calls of the
# fd-related system calls below, stopped with SIGINT after SECONDS (default
# 30) if it has not finished. Then checks the device is clean as flex_fuzz
# does. TAP on stdout, and the figure `fuzz: trinity_syscalls N calls`.
# SEED (default: trinity's own, printed) replays its choices.
count=${1:-20000}
secs=${2:-30}
seed=${3:-}
sysfs=/sys/class/flex/flex0
victims=/dev/flex-trinity
log=/tmp/flex-trinity.log
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
nok() { n=$((n + 1)); failed=1; echo "not ok $n - $*"; }
finish() { echo "1..$n"; exit $failed; }

echo "TAP version 13"
if ! command -v trinity >/dev/null 2>&1; then
	echo "ok 1 # SKIP trinity is not installed (tools/install-deps installs it)"
	echo "1..1"
	exit 0
fi
if [ ! -c /dev/flex0 ]; then
	nok "/dev/flex0 exists (is flex.ko loaded?)"
	finish
fi

nvfs=$(cat $sysfs/sriov_totalvfs)
[ "$nvfs" -gt 2 ] && nvfs=2
echo 0 >$sysfs/sriov_numvfs
if [ "$nvfs" -gt 0 ] && ! echo "$nvfs" >$sysfs/sriov_numvfs; then
	nok "enable $nvfs VFs through $sysfs/sriov_numvfs"
	nvfs=0
fi
rm -rf $victims
mkdir -p $victims
for node in /dev/flex0 /dev/flex0vf*; do
	[ -c "$node" ] && ln "$node" $victims/
done
chmod 0666 $victims/*

# The syscalls that take an fd (or act on what mmap made of one).
calls="ioctl mmap munmap mremap madvise mprotect msync read write pread64 pwrite64
readv writev poll ppoll select fcntl lseek newfstat dup dup3 close flock fsync
splice sendfile"
args=""
for c in $calls; do args="$args -c $c"; done
[ -n "$seed" ] && args="$args -s $seed"

start=$(date +%s)
# shellcheck disable=SC2086 # one word per option
(cd /tmp && timeout -s INT -k 20 "$secs" setpriv --reuid=nobody --regid=nogroup \
	--clear-groups trinity -V $victims --enable-fds=pseudo -N "$count" -q -l off \
	-C 2 $args) >$log 2>&1
rc=$?
took=$(($(date +%s) - start))
ran=$(sed -n 's/.*Ran \([0-9]*\) syscalls.*/\1/p' $log | tail -n 1)
grep -E 'seed|Added|Ran |tainted|Bailing' $log | grep -v futex | sed 's/^/# /'

case $rc in
0) ok "trinity ran $count syscalls in $took s" ;;
124) ok "trinity stopped with SIGINT after $secs s (exit status 124)" ;;
*) nok "trinity: expected exit status 0 (or 124 when stopped after $secs s), got $rc; the end of its log:"
   tail -n 15 $log | sed 's/^/# /' ;;
esac
if grep -q 'became tainted' $log; then
	nok "the kernel stayed untainted under trinity (it reports: $(grep 'became tainted' $log | head -n 1))"
else
	ok "the kernel stayed untainted under trinity"
fi
if [ -n "$ran" ] && [ "$ran" -gt 0 ]; then
	ok "trinity reports $ran syscalls"
elif [ $rc = 124 ]; then
	# Under KASAN and TCG its start alone can take that long.
	n=$((n + 1))
	echo "ok $n # SKIP trinity ran no syscall within $secs s (a slow machine or kernel)"
	ran=0
else
	nok "trinity reports how many syscalls it ran (expected a 'Ran N syscalls' line)"
	ran=0
fi

# Clean up and check that trinity's files left nothing behind.
chmod 0600 $victims/*
rm -rf $victims
tries=50
while [ $tries -gt 0 ] && ! echo 0 >$sysfs/sriov_numvfs 2>/dev/null; do
	sleep 0.1
	tries=$((tries - 1))
done
v=$(cat $sysfs/sriov_numvfs)
if [ "$v" = 0 ]; then ok "teardown: VFs disable"; else nok "teardown: VFs disable (sriov_numvfs is $v, expected 0)"; fi
for f in $sysfs/used $sysfs/resident /sys/kernel/debug/flex/flex0/pinned_pages; do
	v=$(cat "$f")
	if [ "$v" = 0 ]; then ok "teardown: $f is 0"; else nok "teardown: $f is 0 (got $v)"; fi
done
left=$(find $sysfs/regions -mindepth 1 -maxdepth 1 | wc -l)
if [ "$left" = 0 ]; then ok "teardown: no directory left in $sysfs/regions/"
else nok "teardown: no directory left in $sysfs/regions/ (got $left)"; fi

echo "fuzz: trinity_syscalls $ran calls"
echo "fuzz: trinity_seconds $took s"
finish
