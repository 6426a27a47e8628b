#!/usr/bin/env bash
# make deb: the Debian packages libflexsc0, libflexsc-dev and flexsc-run,
# built from this tree's files (those git tracks or would track) by
# dpkg-buildpackage with debian/, then checked by lintian; any lintian
# error or warning fails. The .deb files end in build/deb/.
# Usage: scripts/deb.sh
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
out=$top/build/deb
version=$(dpkg-parsechangelog -l "$top/debian/changelog" -S Version)
src=$out/flexsc-$version
rm -rf "$out"
mkdir -p "$src"
cd "$top"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	# tracked and new files, less those deleted from the tree
	git ls-files -z -c -o --exclude-standard | grep -z -v -x -F -f <(git ls-files -z -d | tr '\0' '\n') |
		xargs -0 cp --parents -t "$src"
else
	tar --exclude='./build*' --exclude=./results -cf - . | tar -xf - -C "$src"
fi
cd "$src"
dpkg-buildpackage -us -uc -b >"$out/build.log" 2>&1 || {
	tail -n 40 "$out/build.log"
	echo "make deb: dpkg-buildpackage failed; the whole log is $out/build.log" >&2
	exit 1
}
cd "$out"
lintian --fail-on error,warning --info "flexsc_${version}_amd64.changes" || {
	echo "make deb: lintian found the errors or warnings above" >&2
	exit 1
}
ls -1 "$out"/*.deb
