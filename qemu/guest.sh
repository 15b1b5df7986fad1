#!/bin/bash
# Build what a guest needs (kernel, twigfs.ko, tools) and boot it: the one
# entry point behind `make run`, `make shell`, `make test` and `make bench`.
#
#   guest.sh [--shell] [script.sh]
#
# FLAVOUR=debug selects the lockdep/KASAN kernel; EXTRA_MODULES lists module
# source folders (built against the same tree) to copy into the guest too;
# PATCHES adds patches on top of patches/series (make compare).  Everything
# else is passed to run.sh (see there).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
read -r -a extra_patches <<<"${PATCHES:-}"
flavour=()
[[ ${FLAVOUR:-default} == debug ]] && flavour=(debug)
tree=$("$top/qemu/build-kernel.sh" "${flavour[@]}" "${extra_patches[@]}" | tail -n 1)

# Modules are built in a copy per kernel tree and source folder, so that two
# flavours, a compare run or two checkouts never overwrite each other's
# objects.
build_module() {
	local src=$1 dst
	dst=$(dirname "$tree")/modules/$(basename "$src")-$(realpath "$src" | sha256sum | cut -c1-8)
	mkdir -p "$dst"
	# Two callers building the same copy at once would link a broken .ko.
	exec 7>"$dst/.lock"
	flock 7
	rsync -a --delete --exclude='*.o' --exclude='*.ko' --exclude='.*.cmd' --exclude='*.mod' \
		--exclude='*.mod.c' --exclude=Module.symvers --exclude=modules.order \
		"$src/" "$dst/src/"
	make -s -C "$tree" M="$dst/src" -j"$(nproc)" modules >&2
	find "$dst/src" -maxdepth 1 -name '*.ko' | sort
	exec 7>&-
}

make -s -C "$top/mkfs" all twig-populate >&2
# twigfs.ko first: the guest's init loads it.
mods=$(build_module "${FS_SRC:-$top/fs}" |
	awk '/\/twigfs\.ko$/ {t = $0; next} {r = r " " $0} END {printf "%s%s", t, r}')
# Modules of the kernel itself (the mutex spin-policy KUnit test).
mods+=" $(find "$tree" -name '*.ko' -not -path '*/modules/*' | sort | tr '\n' ' ')"
for m in ${EXTRA_MODULES:-}; do
	mods+=" $(build_module "$m" | tr '\n' ' ')"
done
KERNEL=$tree/arch/x86/boot/bzImage MODULES=$mods exec "$top/qemu/run.sh" "$@"
