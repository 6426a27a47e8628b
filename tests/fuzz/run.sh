#!/usr/bin/env bash
# Builds the libFuzzer target tests/fuzz/fuzz_api.c with clang (libFuzzer,
# AddressSanitizer with LeakSanitizer, UndefinedBehaviorSanitizer) against
# the library's sources, and runs it for FLEXSC_FUZZ_SECONDS (default 60)
# on the corpus in tests/fuzz/corpus/ (kept between runs, not committed).
# Exit 1 on a crash, a leak, undefined behaviour or a hang (-timeout); the
# input that caused it is saved as tests/fuzz/crash-* (or leak-*, timeout-*).
# Usage: tests/fuzz/run.sh [extra libFuzzer flags]
# Environment: FLEXSC_FUZZ_SECONDS, FLEXSC_FUZZ_BUILD (default build-fuzz), CLANG.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
secs=${FLEXSC_FUZZ_SECONDS:-60}
out=${FLEXSC_FUZZ_BUILD:-$root/build-fuzz}
cc=${CLANG:-}
if [ -z "$cc" ]; then
	for c in clang clang-14; do
		if command -v "$c" >/dev/null 2>&1; then cc=$c; break; fi
	done
fi
if [ -z "$cc" ]; then
	echo "tests/fuzz/run.sh: clang not found (scripts/deps.sh test installs clang and libclang-rt-14-dev)" >&2
	exit 1
fi

# The library's sources, as the Makefile lists them (LIB_SRC, LIB_ASM).
shopt -s nullglob
srcs=("$root"/src/core/*.c "$root"/src/engine/*.c "$root"/src/batch/*.c "$root"/src/api/*.c "$root"/src/core/*.S)
mkdir -p "$out" "$here/corpus"
echo "fuzz: building $out/fuzz_api with $cc"
"$cc" -g -O1 -std=c11 -fno-omit-frame-pointer \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-I"$root/include" -I"$root/src" \
	"$here/fuzz_api.c" "${srcs[@]}" -o "$out/fuzz_api" -luring -lpthread -ldl

echo "fuzz: running for ${secs}s on $here/corpus"
# -timeout: no input may take this long (every wait in it is bounded).
# Each crash, leak or timeout is written under tests/fuzz/ with its input.
set +e
"$out/fuzz_api" -max_total_time="$secs" -timeout=20 -rss_limit_mb=4096 -max_len=2048 \
	-artifact_prefix="$here/" -print_final_stats=1 "$@" "$here/corpus"
rc=$?
set -e
if [ "$rc" -ne 0 ]; then
	echo "fuzz: FAILED (libFuzzer exit $rc); reproduce with: $out/fuzz_api $here/<artifact>" >&2
	exit 1
fi
echo "fuzz: no crash, leak or hang in ${secs}s"
