#!/bin/bash
# Build the guest initramfs: a cached base archive (busybox, dbench, fio, the
# mkfs tools of the reference filesystems, GNU userland in /opt/gnu/bin, and
# their shared libraries) plus a small per-run archive (twigfs.ko, the twigfs
# tools, the guest scripts).
# The kernel unpacks concatenated cpio archives in order.
#
#   build-initramfs.sh <out.cpio> <twigfs.ko> [extra.ko ...]
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cache=${TWIG_CACHE:-$HOME/.cache/twigfs}
out=$1
shift
modules=("$@")

bins=(/usr/bin/busybox /usr/bin/dbench /usr/bin/fio /sbin/mkfs.ext4
      /sbin/mkfs.btrfs /sbin/e2fsck /bin/btrfs)
# Every program of these packages goes to /opt/gnu/bin, off the PATH: the
# guest's sh and its commands stay busybox, and a test names a GNU tool by
# its path ($GNU in twig-lib.sh).
gnu_pkgs=(coreutils findutils diffutils tar attr acl)

# Copy program $1 into tree $2 (at $3, default the same path) with its ELF
# interpreter and library closure.
copy_with_libs() {
	local bin=$1 root=$2 dest=${3:-$1} lib
	install -D -m 0755 "$bin" "$root$dest"
	for lib in $(ldd "$bin" 2>/dev/null | grep -o '/[^ ]*'); do
		[[ -e $root$lib ]] || install -D -m 0755 "$lib" "$root$lib"
	done
}

versions=$(dpkg-query -W -f='${Package} ${Version}\n' busybox-static dbench \
	fio e2fsprogs btrfs-progs libc6 "${gnu_pkgs[@]}" | sha256sum | cut -c1-12)
base=$cache/initramfs-base-$versions.cpio
if [[ ! -f $base ]]; then
	echo "initramfs: building base archive $base" >&2
	root=$(mktemp -d)
	trap 'rm -rf "$root"' EXIT
	for b in "${bins[@]}"; do
		copy_with_libs "$b" "$root"
	done
	for b in $(dpkg-query -L "${gnu_pkgs[@]}" | grep -E '/s?bin/[^/]+$'); do
		if [[ -f $b ]]; then
			copy_with_libs "$b" "$root" "/opt/gnu/bin/${b##*/}"
		fi
	done
	install -D -m 0644 /usr/share/dbench/client.txt \
		"$root/usr/share/dbench/client.txt"
	mkdir -p "$root"/{bin,sbin,usr/sbin,proc,sys,dev,mnt,tmp,results,run,etc}
	ln -sf /usr/bin/busybox "$root/bin/sh"
	echo "root:x:0:0:root:/root:/bin/sh" >"$root/etc/passwd"
	echo "root:x:0:" >"$root/etc/group"
	mkdir -p "$cache"
	(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) \
		>"$base.tmp"
	mv "$base.tmp" "$base"
fi

over=$(mktemp -d)
trap 'rm -rf "$over"' EXIT
install -D -m 0755 "$top/qemu/guest/init" "$over/init"
for f in "$top"/qemu/guest/*.sh "$top"/qemu/tests/*.sh; do
	[[ -e $f ]] && install -D -m 0755 "$f" "$over/twig/$(basename "$f")"
done
# The lock configurations (qemu/guest/lock-matrix.sh reads them).
for f in configs.txt configs.sh; do
	install -D -m 0644 "$top/workloads/$f" "$over/twig/$f"
done
# Small test programs for what busybox cannot do, and the bench's own
# (tests check what its workloads do to the kernel), static so they need
# no libraries in the guest.
for c in "$top"/qemu/tests/*.c "$top"/workloads/twig-*.c; do
	[[ -e $c ]] || continue
	mkdir -p "$over/twig"
	cc -std=gnu11 -static -O2 -Wall -Wextra -Werror -o \
		"$over/twig/$(basename "$c" .c)" "$c"
done
for t in mkfs.twigfs fsck.twigfs twigfs-dump; do
	[[ -x $top/mkfs/$t ]] || continue
	copy_with_libs "$top/mkfs/$t" "$over" "/usr/sbin/$t"
done
# The tests' image writer (states a crash leaves, damaged trees).
if [[ -x $top/mkfs/twig-populate ]]; then
	copy_with_libs "$top/mkfs/twig-populate" "$over" /twig/twig-populate
fi

for m in "${modules[@]}"; do
	install -D -m 0644 "$m" "$over/lib/twigfs/$(basename "$m")"
done
cp "$base" "$out.tmp"
(cd "$over" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) >>"$out.tmp"
mv "$out.tmp" "$out"
