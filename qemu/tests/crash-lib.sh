# shellcheck shell=sh
# Shared by the guest sides of scripts/test-crash.sh and
# scripts/test-crashpoints.sh (busybox sh): the writers' directories, the
# data changes of their plans, and starting them.  Sourced, not run.
# shellcheck disable=SC2034 # H and DEV are the callers'
H=/twig/twig-helper
G=/opt/gnu/bin
DEV=/dev/vda

# crash_dirs N: crash/shared and crash/w0 .. crash/w<N-1> in the current
# directory, synced.
crash_dirs() {
	mkdir -p crash/shared
	_p=0
	while [ $_p -lt "$1" ]; do
		mkdir -p crash/w$_p
		_p=$((_p + 1))
	done
	sync
}

# crash_change OP FILE A B P: the data change of one plan line: w, x and n
# write B random bytes at byte A of FILE (through /tmp/buf<P>), a appends
# B random bytes, t truncates FILE to A bytes.
crash_change() {
	case $1 in
	w|x|n)	head -c "$4" /dev/urandom >/tmp/buf"$5"
		$G/dd if=/tmp/buf"$5" of="$2" bs="$4" seek="$3" \
			oflag=seek_bytes conv=notrunc 2>/dev/null ;;
	a)	head -c "$4" /dev/urandom >>"$2" ;;
	t)	$G/truncate -s "$3" "$2" ;;
	esac
}

# crash_writers N [ARG...]: the caller's writer function as writers
# 0 .. N-1 (its first argument), ARGs after it, in the background.
crash_writers() {
	_n=$1
	shift
	_p=0
	while [ $_p -lt "$_n" ]; do
		writer $_p "$@" &
		_p=$((_p + 1))
	done
}
