#!/usr/bin/env bash
# make install into a scratch DESTDIR, then build a program against the
# installed headers and library with pkg-config, run it, and run a program
# under the installed flexsc-run --require (its runtime must start: a
# FLEXSC_RAN_FILE line).
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
[ -n "${FLEXSC_BUILD:-}" ] || { echo "FLEXSC_BUILD is not set"; exit 1; }
case $(basename "$FLEXSC_BUILD") in build-*) echo "skip: sanitizer build"; exit 77 ;; esac
command -v pkg-config >/dev/null || { echo "skip: pkg-config missing"; exit 77; }
dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT
prefix=/opt/flexsc-test
make -s -C "$top" install DESTDIR="$dest" PREFIX="$prefix" >"$dest/install.log" 2>&1 || { cat "$dest/install.log"; exit 1; }
for f in lib/libflexsc.so.0 lib/libflexsc.so include/flexsc/flexsc.h include/flexsc/page.h \
	lib/pkgconfig/flexsc.pc share/man/man3/flexsc_post.3 share/man/man7/flexsc.7 \
	share/man/man1/flexsc-run.1 share/man/man1/flexsc-bench.1 \
	bin/flexsc-run bin/flexsc-bench lib/flexsc/libflexsc-run.so; do
	[ -e "$dest$prefix/$f" ] || { echo "not installed: $prefix/$f"; exit 1; }
done
# an installed program finds its libraries where the system looks, or in
# the installed LIBDIR (flexsc-bench, LIBDIR not being a system one here),
# never in the build directory
for f in bin/flexsc-run bin/flexsc-bench lib/libflexsc.so.0 lib/flexsc/libflexsc-run.so; do
	path=$(readelf -d "$dest$prefix/$f" | sed -n 's/.*Library r[a-z]*path: \[\(.*\)\]$/\1/p')
	want=
	[ "$f" = bin/flexsc-bench ] && want=$prefix/lib
	[ "$path" = "$want" ] || { echo "$prefix/$f has the run path '$path', not '$want'"; exit 1; }
done
soname=$(objdump -p "$dest$prefix/lib/libflexsc.so.0" | awk '/SONAME/ {print $2}')
[ "$soname" = libflexsc.so.0 ] || { echo "soname is '$soname'"; exit 1; }
# only the public API and the documented libc wrappers are exported
extra=$(nm -D --defined-only "$dest$prefix/lib/libflexsc.so.0" | awk '{print $3}' | sed 's/@.*//' |
	grep -v -E '^(flexsc_[a-z_]+|set(e|re|res)?[ug]id|setgroups|capset|prctl|syscall|setsockopt|fcntl(64)?|ioctl|close|dup[23]?|close_range|pipe2?|socket(pair)?|eventfd|epoll_create1?|signalfd|timerfd_create|memfd_create|inotify_init1?|FLEXSC_0\.1)$' || true)
[ -z "$extra" ] || { echo "exported beyond the API: $extra"; exit 1; }
cp "$top/tests/shell/installed_api.c" "$dest/prog.c"
export PKG_CONFIG_PATH="$dest$prefix/lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$dest"
# shellcheck disable=SC2046
cc "$dest/prog.c" -o "$dest/prog" $(pkg-config --cflags --libs flexsc) -Wl,-rpath,"$dest$prefix/lib" || exit 1
out=$("$dest/prog") || { echo "installed library: program failed"; exit 1; }
[ "$out" = ok ] || { echo "installed library: $out"; exit 1; }
out=$(FLEXSC_RAN_FILE=$dest/ran "$dest$prefix/bin/flexsc-run" --require -- /bin/echo under-flexsc-run) ||
	{ echo "installed flexsc-run failed"; exit 1; }
[ "$out" = under-flexsc-run ] || { echo "installed flexsc-run printed '$out'"; exit 1; }
grep -q " $(readlink -f /bin/echo)\$" "$dest/ran" 2>/dev/null ||
	{ echo "installed flexsc-run: the runtime did not run in echo (FLEXSC_RAN_FILE: '$(cat "$dest/ran" 2>/dev/null)')"; exit 1; }
echo "installed: library, headers, pkg-config, man pages, flexsc-run; a program built with pkg-config runs"
