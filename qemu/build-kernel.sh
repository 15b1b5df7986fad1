#!/bin/bash
# Build the guest kernel in a cache outside the checkout.
#
#   build-kernel.sh [debug] [extra.patch ...]
#
# The build directory is named by a hash of everything that decides its
# contents: the linux-source-6.1 package version, patches/series and the
# patches it lists, any extra patches (make compare), and the config
# fragments.  Unchanged inputs reuse the finished tree; the path of the tree
# is printed as the last line of stdout.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cache=${TWIG_CACHE:-$HOME/.cache/twigfs}
src=/usr/src/linux-source-6.1.tar.xz
flavour=default
if [[ ${1:-} == debug ]]; then
	flavour=debug
	shift
fi
extra=("$@")

fragments=("$top/qemu/kernel.config")
[[ $flavour == debug ]] && fragments+=("$top/qemu/kernel-debug.config")

series=()
if [[ -f $top/patches/series ]]; then
	while read -r p _; do
		[[ -z $p || $p == \#* ]] && continue
		series+=("$top/patches/$p")
	done <"$top/patches/series"
fi
patches=()
for p in "${series[@]}" "${extra[@]}"; do
	patches+=("$(realpath "$p")")
done

version=$(dpkg-query -W -f='${Version}' linux-source-6.1)
key=$( {
	echo "$version $flavour"
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
tar -xJf "$src" -C "$dir"
mv "$dir"/linux-source-6.1 "$tree"
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
