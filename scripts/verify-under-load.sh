#!/bin/sh
# verify-under-load.sh [contender…]: arena verify while two busy loops keep both cores busy, as a
# first run's builds do beside it. Verify's timing-based checks wait for their conditions, so a
# loaded machine must give no spurious failure. The loops are stopped however verify ends.
# Figures: docs/reliability.md.
set -u
cd "$(dirname "$0")/.."
sh -c 'while :; do :; done' & busy1=$!
sh -c 'while :; do :; done' & busy2=$!
trap 'kill $busy1 $busy2 2>/dev/null' EXIT INT TERM
start=$(date +%s)
./arena verify "$@"
status=$?
echo "verify under load: exit $status in $(( $(date +%s) - start )) s (load average $(cut -d' ' -f1-3 /proc/loadavg))"
exit $status
