# The rate of a create run from its raw output: the one parse of fio's
# JSON and fs_mark's table, run by the guest to size the create runs
# (guest-bench.sh, busybox awk) and by the collector for the report
# (benchlib/collect.py, the host's awk):
#
#   awk -v fmt=fio|fs_mark -f create-rate.awk output.txt
#
# prints one line, "ok <files/s> <details as a JSON object>" or
# "error <why>".  fio (create-shared, and create-own before twig-create):
# the files its jobs wrote (write.total_ios) over the slowest job's
# job_runtime.  fs_mark: the mean of the Files/sec of the rows right after
# its header line, one per loop.  Numbers are printed in full (%.17g), so
# both readers get the same value.

function isnum(s) { return s ~ /^[-+]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][-+]?[0-9]+)?$/ }
function g(x) { return sprintf("%.17g", x) }
# a float that a JSON reader reads back as a float
function f(x, s) { s = g(x); return s ~ /[.eEn]/ ? s : s ".0" }

fmt == "fs_mark" && table == 1 {
	if (NF == 5 && isnum($1) && isnum($2) && isnum($3) && isnum($4) && isnum($5)) {
		loop[++loops] = $4 + 0
		next
	}
	table = 2
}
fmt == "fs_mark" && !table && /^FSUse%[ \t]+Count[ \t]+Size[ \t]+Files\/sec/ { table = 1 }

# fio: a scanner of its JSON (from the first "{" to the "}" that closes
# it), token by token, that keeps the key each open object is at.
fmt == "fio" && !closed {
	s = $0
	if (!depth) {
		i = index(s, "{")
		if (!i) next
		s = substr(s, i)
	}
	while (s != "" && !closed && !bad) {
		if (match(s, /^[ \t\r,:]+/)) {
			s = substr(s, RLENGTH + 1)
			continue
		}
		c = substr(s, 1, 1)
		if (c == "{" || c == "[") {
			depth++
			key[depth] = ""
			if (depth == 3 && key[1] == "jobs" && c == "{") jobs++
			s = substr(s, 2)
		} else if (c == "}" || c == "]") {
			if (--depth == 0) closed = 1
			s = substr(s, 2)
		} else if (c == "\"") {
			if (!match(s, /^"([^"\\]|\\.)*"/)) { bad = "a string ends with its line"; break }
			tok = substr(s, 2, RLENGTH - 2)
			s = substr(s, RLENGTH + 1)
			if (s ~ /^[ \t]*:/) key[depth] = tok
		} else if (match(s, /^[-+.0-9A-Za-z]+/)) {
			# a number, true, false or null
			tok = substr(s, 1, RLENGTH)
			s = substr(s, RLENGTH + 1)
			if (key[1] != "jobs") continue
			if (depth == 3 && key[3] == "error" && tok + 0 != 0) joberror = 1
			if (depth == 3 && key[3] == "job_runtime" && tok + 0 > runtime) runtime = tok + 0
			if (depth == 4 && key[3] == "write" && key[4] == "total_ios") files += tok
		} else {
			bad = "unexpected " c
		}
	}
}

END {
	if (fmt == "fs_mark") {
		if (!table) { print "error no fs_mark table"; exit }
		if (!loops) { print "error fs_mark printed no loop"; exit }
		list = ""
		for (i = 1; i <= loops; i++) {
			sum += loop[i]
			list = list (i > 1 ? ", " : "") f(loop[i])
		}
		print "ok", g(sum / loops), "{\"fsmark_loops\": [" list "]}"
	} else if (fmt == "fio") {
		if (!depth && !closed) { print "error no fio JSON"; exit }
		if (bad || !closed) { print "error bad fio JSON: " (bad ? bad : "it ends before its last }"); exit }
		if (!jobs || joberror) { print "error fio job error"; exit }
		secs = runtime / 1000
		if (secs <= 0) { print "error zero runtime"; exit }
		print "ok", g(files / secs), "{\"files\": " g(files) ", \"fio_seconds\": " f(secs) "}"
	} else {
		print "error create-rate.awk: fmt must be fio or fs_mark"
	}
}
