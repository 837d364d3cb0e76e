#!/bin/sh
# flex module unload: refused while a file is open, clean afterwards, and
# the module loads again with the same parameters.
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
nok() { n=$((n + 1)); failed=1; echo "not ok $n - $1"; }
check() { desc=$1; shift; if "$@"; then ok "$desc"; else nok "$desc"; fi; }

echo "TAP version 13"
echo "1..6"
if [ -z "$FLEX_KO" ] || [ ! -f "$FLEX_KO" ]; then
	for i in 1 2 3 4 5 6; do echo "ok $i # SKIP FLEX_KO not given"; done
	exit 0
fi

params=""
for p in /sys/module/flex/parameters/*; do
	params="$params $(basename "$p")=$(cat "$p")"
done

exec 3<>/dev/flex0
if rmmod flex 2>/dev/null; then nok "rmmod refused while /dev/flex0 is open (it succeeded)"
else ok "rmmod refused while /dev/flex0 is open"; fi
check "module still loaded while open" test -d /sys/module/flex
exec 3>&-

if out=$(rmmod flex 2>&1); then ok "rmmod succeeds once closed"
else nok "rmmod succeeds once closed: expected success, got: $out"; fi
check "device class gone after unload" test ! -e /sys/class/flex
# shellcheck disable=SC2086
if out=$(insmod "$FLEX_KO" $params 2>&1); then ok "insmod again with$params"
else nok "insmod again with$params: $out"; fi
check "/dev/flex0 back after reload" test -c /dev/flex0
exit $failed
