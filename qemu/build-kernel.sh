#!/bin/bash
# Build the guest kernel in a cache outside the checkout.
#
#   build-kernel.sh [debug] [extra.patch ...]
#
# KERNEL=6.1 (the default) or KERNEL=6.12 picks Debian's linux-source-6.1 or
# linux-source-6.12 and the project's series for it: patches/series for 6.1,
# patches/<generation>/series otherwise.  KERNEL_SRC=/path builds a git
# checkout of your own tree instead: its HEAD plus the uncommitted changes
# to tracked files, with the series of its generation (major.minor) if the
# project has one; SERIES=none applies none, SERIES=file another list.
#
# The build directory is named by a hash of everything that decides its
# contents: the source (package version, or commit and diff), the series
# and the patches it lists, any extra patches (make compare), and the
# config fragments.  Unchanged inputs reuse the finished tree; the path of
# the tree is printed as the last line of stdout.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cache=${TWIG_CACHE:-$HOME/.cache/twigfs}
flavour=default
if [[ ${1:-} == debug ]]; then
	flavour=debug
	shift
fi
extra=("$@")

if [[ -n ${KERNEL_SRC:-} ]]; then
	git -C "$KERNEL_SRC" rev-parse --git-dir >/dev/null 2>&1 ||
		{ echo "kernel: KERNEL_SRC=$KERNEL_SRC is not a git checkout" >&2; exit 2; }
	src=$(cd "$KERNEL_SRC" && pwd)
	release=$(make -s -C "$src" kernelversion)
	generation=$(cut -d. -f1-2 <<<"$release")
	head=$(git -C "$src" rev-parse HEAD)
	version="$release-g${head:0:12}"
	source_id="$head $(git -C "$src" diff HEAD | sha256sum | cut -c1-12)"
else
	generation=${KERNEL:-6.1}
	[[ $generation =~ ^[0-9]+\.[0-9]+$ ]] ||
		{ echo "kernel: KERNEL must be a generation like 6.1 or 6.12" >&2; exit 2; }
	src=/usr/src/linux-source-$generation.tar.xz
	version=$(dpkg-query -W -f='${Version}' "linux-source-$generation" 2>/dev/null) ||
		{ echo "kernel: linux-source-$generation is not installed (apt-get install linux-source-$generation)" >&2; exit 2; }
	[[ -f $src ]] || { echo "kernel: $src is missing" >&2; exit 2; }
	source_id=$version
fi

if [[ -n ${SERIES:-} ]]; then
	series_file=$SERIES
elif [[ $generation == 6.1 ]]; then
	series_file=$top/patches/series
else
	series_file=$top/patches/$generation/series
fi
if [[ $series_file != none && ! -f $series_file ]]; then
	if [[ -n ${SERIES:-} ]]; then
		echo "kernel: SERIES=$SERIES does not exist" >&2
		exit 2
	fi
	echo "kernel: no patch series for $generation ($series_file): building it unpatched" >&2
	series_file=none
fi

fragments=("$top/qemu/kernel.config")
IFS=. read -r gen_major gen_minor <<<"$generation"
((gen_major * 100 + gen_minor >= 602)) && fragments+=("$top/qemu/kernel-since-6.2.config")
[[ $flavour == debug ]] && fragments+=("$top/qemu/kernel-debug.config")

series=()
if [[ $series_file != none ]]; then
	series_dir=$(dirname "$series_file")
	while read -r p _; do
		[[ -z $p || $p == \#* ]] && continue
		series+=("$series_dir/$p")
	done <"$series_file"
fi
patches=()
for p in "${series[@]}" "${extra[@]}"; do
	patches+=("$(realpath "$p")")
done

key=$( {
	echo "$source_id $flavour"
	for f in "${patches[@]}" "${fragments[@]}"; do
		sha256sum <"$f"
	done
} | sha256sum | cut -c1-12)
dir=$cache/linux-$version-$flavour-$key
tree=$dir/linux

if [[ -f $dir/built ]]; then
	echo "kernel: cached $dir" >&2
	echo "$tree"
	exit 0
fi

# One build at a time: a second caller waits, then finds the tree built.
mkdir -p "$cache"
exec 8>"$cache/kernel-build.lock"
if ! flock -n 8; then
	echo "kernel: waiting for another kernel build to finish" >&2
	flock 8
fi
if [[ -f $dir/built ]]; then
	echo "kernel: cached $dir" >&2
	echo "$tree"
	exit 0
fi

start=$SECONDS
echo "kernel: building $flavour flavour in $dir" >&2
rm -rf "$dir"
mkdir -p "$dir"
if [[ -n ${KERNEL_SRC:-} ]]; then
	mkdir "$tree"
	git -C "$src" archive HEAD | tar -x -C "$tree"
	git -C "$src" diff --binary HEAD | (cd "$tree" && git apply --allow-empty)
else
	tar -xJf "$src" -C "$dir"
	mv "$dir/linux-source-$generation" "$tree"
fi
for p in "${patches[@]}"; do
	echo "kernel: applying $(basename "$p")" >&2
	patch -d "$tree" -p1 -s --no-backup-if-mismatch <"$p"
done

jobs=$(nproc)
make -C "$tree" -s ARCH=x86_64 tinyconfig >/dev/null
"$tree"/scripts/kconfig/merge_config.sh -m -O "$tree" "$tree/.config" \
	"${fragments[@]}" >/dev/null
make -C "$tree" -s ARCH=x86_64 olddefconfig

# A fragment line the kernel silently dropped (a typo, a missing
# dependency) would quietly change the experiment: refuse to build.
missing=0
for f in "${fragments[@]}"; do
	while IFS= read -r line; do
		if [[ $line =~ ^#\ (CONFIG_[A-Z0-9_]+)\ is\ not\ set$ ]]; then
			if grep -q "^${BASH_REMATCH[1]}=" "$tree/.config"; then
				echo "kernel: $line did not survive olddefconfig" >&2
				missing=1
			fi
			continue
		fi
		[[ $line =~ ^CONFIG_ ]] || continue
		if ! grep -qxF "$line" "$tree/.config"; then
			echo "kernel: $line did not survive olddefconfig" >&2
			missing=1
		fi
	done <"$f"
done
((missing == 0)) || exit 1

make -C "$tree" -s -j"$jobs" ARCH=x86_64 bzImage modules >&2
printf '%s\n' "${patches[@]}" >"$dir/patches"
sha256sum "$tree/.config" | cut -c1-12 >"$dir/config-hash"
echo "$((SECONDS - start))" >"$dir/build-seconds"
touch "$dir/built"
echo "kernel: built in $((SECONDS - start)) s" >&2
echo "$tree"
