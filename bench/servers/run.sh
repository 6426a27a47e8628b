#!/usr/bin/env bash
# Real Debian servers, unmodified, on NPTL and under flexsc-run, side by side.
#   bench/servers/run.sh BUILD [apache|mariadb|bind|nginx ...] [--sweep] [--repeat N] [-- OPTIONS for every script]
#
# Runs bench/servers/apache.sh, mariadb.sh, bind.sh and nginx.sh (default:
# all four, one after the other; each goes on when another failed), each
# writing results/servers-SERVER.jsonl, then prints one table over all of
# them with the flexsc / NPTL ratios. Short by default (10 s per point, two
# points per server and client, each run once); --repeat N runs every point
# N times under each runtime, alternating which goes first (make
# bench-servers: 5); --sweep runs the issue's ranges: Apache concurrency
# 16 64 256 1024 2048, sysbench threads 16 32 64 128 256, dnsperf clients x
# in-flight 1:16 4:64 16:128 32:256, nginx concurrency 16 64 256 1024.
# Options after -- go to every script, after run.sh's own (common ones:
# --seconds S, --warm S, --repeat N, --runtimes "nptl flexsc flexsc-sc1";
# see bench/servers/lib.sh). Needs: scripts/deps.sh servers, make.
# Exit status 1 if any point of any server failed.
set -euo pipefail
usage() { sed -n '3p' "$0" | sed 's/^# *//' >&2; exit 2; }
[ $# -ge 1 ] || usage
build=$1
shift
here=$(cd "$(dirname "$0")" && pwd)
servers=() sweep=0 extra=() common=()
while [ $# -gt 0 ]; do
	case $1 in
	apache|mariadb|bind|nginx) servers+=("$1") ;;
	--sweep) sweep=1 ;;
	--repeat) [ $# -ge 2 ] || usage; common+=(--repeat "$2"); shift ;;
	--) shift; extra=("$@"); break ;;
	*) usage ;;
	esac
	shift
done
[ ${#servers[@]} -gt 0 ] || servers=(apache mariadb bind nginx)

failed=0 files=()
for s in "${servers[@]}"; do
	args=()
	if [ $sweep = 1 ]; then
		case $s in
		apache) args=(--conc "16 64 256 1024 2048") ;;
		mariadb) args=(--threads "16 32 64 128 256") ;;
		bind) args=(--load "1:16 4:64 16:128 32:256") ;;
		nginx) args=(--conc "16 64 256 1024") ;;
		esac
	fi
	echo "bench/servers/run.sh: ---- $s ----" >&2
	"$here/$s.sh" "$build" ${common[@]+"${common[@]}"} ${args[@]+"${args[@]}"} ${extra[@]+"${extra[@]}"} || failed=1
	files+=("$here/../../results/servers-$s.jsonl")
done

if [ ${#servers[@]} -gt 1 ]; then
	echo
	echo "==== all servers ===="
	(
		SV_SERVER=all SV_NAME=bench/servers/run.sh
		. "$here/lib.sh"
		sv_summary "${files[@]}"
	)
fi
exit $failed
