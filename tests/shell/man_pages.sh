#!/usr/bin/env bash
# The man pages cover the exported API and render cleanly:
#  - every flexsc_* function libflexsc exports (scripts/exports.sh lib) has docs/man/<symbol>.3,
#    and names the symbol in its NAME section (directly or through .so);
#  - every .so redirect in docs/man points to a page that exists there;
#  - every tool (tools/*.c) has docs/man/<tool>.1 naming each option of its
#    --help;
#  - if groff is installed, every page renders with no warning (groff -ww).
# Exit 0 pass, 1 fail, 77 skip (nothing to check). FLEXSC_BUILD is not needed.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
man=$root/docs/man
fail=0

bad() {
	echo "FAIL: $*"
	fail=1
}

[ -d "$man" ] || { echo "FAIL: no $man directory"; exit 1; }

# The exported flexsc_* functions, from the one list of exports.
symbols=$("$root/scripts/exports.sh" lib | tr -s ';[:space:]' '\n' | grep -E '^flexsc_[A-Za-z0-9_]+$' | sort -u)
[ -n "$symbols" ] || bad "no flexsc_* symbol in scripts/exports.sh lib"

# A page's .so target (man3/x.3 -> $man/x.3), or nothing if it is no redirect.
so_target() {
	local line
	line=$(grep -m1 -E '^\.so[[:space:]]' "$1") || return 0
	line=${line#.so}
	line=${line//[[:space:]]/}
	echo "$man/$(basename "$line")"
}

# Every .so points to an existing page that is not itself a redirect.
for page in "$man"/*.[0-9]; do
	[ -e "$page" ] || continue
	target=$(so_target "$page")
	[ -n "$target" ] || continue
	if [ ! -f "$target" ]; then
		bad "$(basename "$page"): .so target $(basename "$target") does not exist"
	elif [ -n "$(so_target "$target")" ]; then
		bad "$(basename "$page"): .so target $(basename "$target") is itself a redirect"
	fi
done

# Every exported symbol has its page, and the page names it.
for sym in $symbols; do
	page=$man/$sym.3
	if [ ! -f "$page" ]; then
		bad "$sym is exported but docs/man/$sym.3 is missing"
		continue
	fi
	target=$(so_target "$page")
	[ -n "$target" ] && page=$target
	[ -f "$page" ] || continue
	name=$(sed -n '/^\.SH NAME/,/^\.SH/p' "$page" | sed '1d;$d')
	if ! grep -qE "(^|[ ,])$sym([ ,]|\\\\-|$)" <<<"$name"; then
		bad "$(basename "$page") does not name $sym in its NAME section"
	fi
done

# Every tool has a page in section 1 that names each option of its --help.
for src in "$root"/tools/*.c; do
	tool=$(basename "$src" .c)
	page=$man/$tool.1
	[ -f "$page" ] || { bad "tools/$tool.c has no docs/man/$tool.1"; continue; }
	for opt in $(grep -oE '"  --[a-z][a-z-]*' "$src" | sed 's/^"  //'); do
		grep -qF -- "${opt//-/\\-}" "$page" || bad "$tool.1 does not describe $opt"
	done
done

# Every page renders without a warning, redirects resolved as man(1) would
# (from a tree with man3/ and man7/).
if command -v groff >/dev/null 2>&1; then
	rendered=", every page renders cleanly"
	tree=$(mktemp -d)
	trap 'rm -rf "$tree"' EXIT
	for sec in 1 2 3 4 5 6 7 8; do
		ln -s "$man" "$tree/man$sec"
	done
	for page in "$man"/*.[0-9]; do
		[ -e "$page" ] || continue
		base=$(basename "$page")
		sec=${base##*.}
		out=$(cd "$tree" && groff -man -ww -z "man$sec/$base" 2>&1)
		rc=$?
		if [ $rc -ne 0 ] || [ -n "$out" ]; then
			bad "$base does not render cleanly (groff exit $rc):"
			printf '%s\n' "$out" | sed 's/^/    /'
		fi
	done
else
	echo "note: groff is not installed; rendering not checked"
	rendered=""
fi

n=$(grep -c . <<<"$symbols")
if [ $fail -eq 0 ]; then
	echo "ok: $n exported flexsc_* symbols and every tool's options documented$rendered"
fi
exit $fail
