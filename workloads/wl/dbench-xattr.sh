# shellcheck shell=sh
# dbench-xattr: dbench 50 with --xattr, every file's DOS attributes kept
# in user.DosAttrib as Samba keeps them (twigfs's xattr items).  Sourced by
# guest-bench.sh's run_workload in a subshell, in the run's filesystem at
# $mnt, with the run's settings (params.env; DURATION is the switchback
# run's length there); prints dbench's output, read on the host by the
# "dbench" parser (wl/dbench-xattr.txt).
# shellcheck disable=SC2154 # mnt, DURATION and CLIENTS are guest-bench.sh's
dbench -c /usr/share/dbench/client.txt -D "$mnt" -t "$DURATION" --xattr "$CLIENTS"
