#!/bin/bash
# Install what the project needs from Debian, skipping what is present.
set -euo pipefail

pkgs=(
	# guest kernel
	linux-source-6.1 linux-source-6.12 bc bison flex libelf-dev libssl-dev cpio xz-utils
	make gcc patch sparse kmod
	# guest and its userspace
	qemu-system-x86 busybox-static dbench fio fsmark e2fsprogs btrfs-progs
	coreutils findutils diffutils tar attr acl
	# harness and reports
	rsync gnuplot-nox python3 python3-scipy shellcheck linux-perf
)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing+=("$p")
done
if ((${#missing[@]} == 0)); then
	exit 0
fi
echo "deps: installing ${missing[*]}" >&2
if [[ $(id -u) != 0 ]]; then
	echo "deps: need root to apt-get install ${missing[*]}" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
