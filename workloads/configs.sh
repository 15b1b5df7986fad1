# shellcheck shell=sh
# The shell's one reader of the configuration table (configs.txt; Python's
# is benchlib/defs.py), sourced by bench.sh on the host and by
# guest-bench.sh and qemu/guest/lock-matrix.sh in the guest (busybox sh),
# after each sets config_table to the table's path.

# config_rows: "<name> <fs> <lock> <spin> <mutex_spin>" per configuration,
# in the table's order.
config_rows() {
	while read -r name fs lock spin policy _; do
		case $name in '' | '#'*) continue ;; esac
		echo "$name $fs $lock $spin $policy"
	done <"${config_table:?}"
}

# config_names [fs]: the configurations' names on one line, those on fs
# alone when given.
config_names() {
	config_rows | while read -r name fs _; do
		if [ -z "${1:-}" ] || [ "$fs" = "$1" ]; then printf '%s ' "$name"; fi
	done
}

# config_def <configuration>: "<fs> <lock> <spin> <mutex_spin>" of its row
# (a "#A"/"#B" copy is its configuration's), "unknown - - -" for none.
config_def() {
	# every row read: a reader that left early could fail its writer
	config_rows | {
		def=
		while read -r name row; do
			if [ -z "$def" ] && [ "$name" = "${1%%#*}" ]; then def=$row; fi
		done
		echo "${def:-unknown - - -}"
	}
}
