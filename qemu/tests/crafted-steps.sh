#!/bin/sh
# The long steps of test-crafted.sh, as a script so that busybox timeout
# can bound them:
#   crafted-steps.sh walk DIR       readdir, lstat, stat, read, readlink all
#   crafted-steps.sh scribble DIR   create, mkdir, append to every file, rename
#   crafted-steps.sh remove DIR     unlink all
# Exit status 1 if any access failed (an allowed outcome on a damaged image).
r=0
d=$2
case $1 in
walk)
	ls -lR "$d" >/dev/null || r=1
	find "$d" -exec stat {} + >/dev/null || r=1
	find "$d" -type f -exec cat {} + >/dev/null || r=1
	find "$d" -type l >/tmp/crafted-links
	while read -r l; do
		readlink "$l" >/dev/null || r=1
	done </tmp/crafted-links
	;;
scribble)
	echo crafted >"$d/crafted-new" || r=1
	mkdir "$d/crafted-dir" || r=1
	mv "$d/crafted-new" "$d/crafted-dir/moved" || r=1
	# every file: an append rewrites its last sector (CoW), which frees
	# what its extent item names (an extent with an offset)
	find "$d" -type f >/tmp/crafted-files
	while read -r f; do
		echo more >>"$f" || r=1
	done </tmp/crafted-files
	for e in "$d"/*; do
		[ -e "$e" ] || continue
		mv "$e" "$e.renamed" || r=1
	done
	sync
	;;
remove)
	rm -rf "${d:?}"/* || r=1
	sync
	;;
*)
	echo "usage: $0 walk|scribble|remove DIR" >&2
	exit 2
	;;
esac
exit $r
