#!/bin/bash
# SPDX-License-Identifier: MIT
# Base inputs and seed corpora of the fuzz targets (fuzz/README.md).
#
#   fuzz/seeds.sh data               build-fuzz/data: mkcore's synthetic cores, the link_map
#                                    bases, links to the fixture bundles
#   fuzz/seeds.sh corpus [TARGET...] build-fuzz/corpus/<target>/: seeds from the fixtures
#                                    (build-fuzz/mkseeds, fixture and mkcore cores), the
#                                    committed fuzz/seeds/<target>/ and the regression
#                                    inputs fuzz/regressions/<target>/. Existing corpus
#                                    files (what earlier runs found) are kept.
# FUZZ_DIR (default build-fuzz) is where `make fuzz-build` put mkcore and mkseeds.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
FUZZ_DIR=${FUZZ_DIR:-build-fuzz}
case $FUZZ_DIR in /*) ;; *) FUZZ_DIR=$ROOT/$FUZZ_DIR ;; esac
DATA=$FUZZ_DIR/data
ALL="fuzz_core fuzz_linkmap fuzz_tls fuzz_bundle fuzz_callbacks fuzz_image fuzz_jobjson fuzz_stack fuzz_tree fuzz_progress"

data() {
	rm -rf "$DATA"
	mkdir -p "$DATA/mkcore"
	# mkcore is built with the sanitizers; its own allocations at exit are not our subject
	ASAN_OPTIONS=detect_leaks=0 "$FUZZ_DIR/mkcore" "$DATA/mkcore" >/dev/null
	for a in x86_64 i386 s390x ppc32; do
		cp "$DATA/mkcore/$a-lm-ok.core" "$DATA/lm-$a.core"
	done
	for a in x86_64 i386 aarch64 s390x; do
		ln -s "$ROOT/fixtures/omp/$a-debug/bundle.core.gz" "$DATA/omp-$a.bundle.gz"
	done
	for a in i386 s390x; do
		ln -s "$ROOT/fixtures/mpi/$a-singleton/bundle.core.gz" "$DATA/mpi-$a.bundle.gz"
	done
	# fuzz_bundle's unwind ELF seeds: fixture executables of the bases' machines
	ln -s "$ROOT/fixtures/core/x86_64-kernel/exe.gz" "$DATA/unwind-x86_64.elf.gz"
	ln -s "$ROOT/fixtures/core/s390x-qemu/exe.gz" "$DATA/unwind-s390x.elf.gz"
	ln -s "$ROOT/fixtures/core/i386-kernel/exe.gz" "$DATA/unwind-i386.elf.gz"
	# fuzz_image: the aarch64 qemu core (no build-ids: any file is taken as its images')
	ln -s "$ROOT/fixtures/core/aarch64-qemu/core.gz" "$DATA/image-aarch64-qemu.core.gz"
	# fuzz_stack: every fixture core with its executable and its pinned sysroot (the
	# target copies the files coreq finds there into a private sysroot)
	local d s
	for d in "$ROOT"/fixtures/core/*/; do
		d=${d%/}
		ln -s "$d/core.gz" "$DATA/stack-$(basename "$d").core.gz"
		ln -s "$d/exe.gz" "$DATA/stack-$(basename "$d").exe.gz"
		s=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1])).get("sysroot") or "")' "$d/fixture.json")
		if [ -n "$s" ] && [ ! -e "$DATA/stack-sysroot-$s" ]; then
			"$ROOT/tools/fixtures/sysroot.sh" "$s" "$FUZZ_DIR/sysroot-$s" >/dev/null
			ln -s "$FUZZ_DIR/sysroot-$s" "$DATA/stack-sysroot-$s"
		fi
	done
	touch "$DATA/.ready"
}

corpus() {
	[ -e "$DATA/.ready" ] || data
	local targets=${*:-$ALL} gen=$FUZZ_DIR/seeds-generated
	rm -rf "$gen"
	"$FUZZ_DIR/mkseeds" "$DATA" "$gen"
	for t in $targets; do
		local c=$FUZZ_DIR/corpus/$t
		mkdir -p "$c"
		if [ "$t" = fuzz_core ]; then
			# synthetic cores (valid, malformed, compressed) and the small fixture cores
			for f in "$DATA"/mkcore/*.core "$DATA"/mkcore/*.gz "$DATA"/mkcore/*.zz; do
				[ "$(stat -c %s "$f")" -le 65536 ] && cp "$f" "$c/mkcore-$(basename "$f")"
			done
			for f in "$ROOT"/fixtures/core/*/core.gz; do
				[ "$(stat -c %s "$f")" -le 65536 ] && cp "$f" "$c/fixture-$(basename "$(dirname "$f")").core.gz"
			done
			# the formats systemd-coredump stores cores in (input/decompress.h), made by
			# their own tools over a synthetic core
			local raw
			# (a valid one: the first by name is empty.core, which says nothing of a format)
			raw=$(ls "$DATA"/mkcore/*-lm-ok.core | head -1)
			if [ -n "$raw" ]; then
				command -v zstd >/dev/null && zstd -q -f -o "$c/mkcore-core.zst" "$raw"
				command -v xz >/dev/null && xz -T1 -c "$raw" >"$c/mkcore-core.xz"
				command -v lz4 >/dev/null && lz4 -q -f "$raw" "$c/mkcore-core.lz4"
				# an Ubuntu apport report around it (input/apport.h), in apport's format
				python3 "$ROOT/tools/fixtures/apport/make-crash.py" --core "$raw" --exe-path /usr/bin/prog \
					"$c/mkcore-core.crash"
			fi
		fi
		if [ "$t" = fuzz_image ]; then
			# byte 0 picks the place (0 executable, 1 libc, 2 ld.so), the rest is the file:
			# the fixture executables of every architecture, aarch64's ld.so
			local sr=$FUZZ_DIR/sysroot-aarch64 f
			"$ROOT/tools/fixtures/sysroot.sh" aarch64 "$sr" >/dev/null
			for f in "$ROOT"/fixtures/core/*/exe.gz; do
				{ printf '\0'; zcat "$f"; } >"$c/exe-$(basename "$(dirname "$f")")"
			done
			{ printf '\2'; cat "$sr/lib/ld-linux-aarch64.so.1"; } >"$c/ld-aarch64"
		fi
		if [ "$t" = fuzz_stack ]; then
			# byte 0 picks the base (fuzz_stack.c's order), byte 1 the flags: each base
			# untouched, one thread of it alone, bounded to 8 frames, and with values read
			# from the frames' DWARF
			local b
			for b in 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18; do
				printf "\\$(printf %o "$b")\\0" >"$c/base-$b"
				printf "\\$(printf %o "$b")\\20" >"$c/base-$b-thread0"
				printf "\\$(printf %o "$b")\\61" >"$c/base-$b-thread2-short"
				printf "\\$(printf %o "$b")\\10" >"$c/base-$b-values"
			done
		fi
		if [ "$t" = fuzz_jobjson ]; then
			# the per-rank documents of the MPI fixture jobs, NUL-separated
			python3 - "$ROOT/fixtures/mpi" "$c" <<'PY'
import glob, json, os, sys
for f in glob.glob(os.path.join(sys.argv[1], "*", "golden", "job.json")):
    ranks = json.load(open(f))["ranks"]
    name = os.path.basename(os.path.dirname(os.path.dirname(f)))
    with open(os.path.join(sys.argv[2], "job-" + name), "wb") as out:
        out.write(b"\0".join(json.dumps(r, separators=(",", ":")).encode() for r in ranks))
# the stack tree's inputs: bt documents of the fixture cores (two copies: a merge), and a tree
root = os.path.dirname(sys.argv[1])
for f in glob.glob(os.path.join(root, "core", "*", "golden", "bt.json")):
    name = os.path.basename(os.path.dirname(os.path.dirname(f)))
    doc = json.dumps(json.load(open(f)), separators=(",", ":")).encode()
    with open(os.path.join(sys.argv[2], "bt-" + name), "wb") as out:
        out.write(doc + b"\0" + doc)
# the OpenMP join's inputs: a bundle's stacks and its OMPD report (the parts the join reads)
for f in glob.glob(os.path.join(root, "omp", "*-debug", "golden", "ompd-64.json")):
    name = os.path.basename(os.path.dirname(os.path.dirname(f)))
    o = json.load(open(f))
    o = {k: o[k] for k in ("schema", "threads", "tasks", "parallel_regions", "problems") if k in o}
    bt = json.load(open(os.path.join(os.path.dirname(f), "bt.json")))
    with open(os.path.join(sys.argv[2], "omp-" + name), "wb") as out:
        out.write(json.dumps(bt, separators=(",", ":")).encode() + b"\0" + json.dumps(o, separators=(",", ":")).encode())
for f in glob.glob(os.path.join(root, "stacks", "golden", "*.json")):
    with open(os.path.join(sys.argv[2], "tree-" + os.path.basename(f)[:-5]), "wb") as out:
        out.write(json.dumps(json.load(open(f)), separators=(",", ":")).encode())
PY
		fi
		if [ "$t" = fuzz_tree ]; then
			# the generator's programs (fuzz_tree.c): every label mode with both thread
			# modes; bt documents with ranks, by order, deep; trees wide, chained, marked
			local m
			for m in 0 1 2 4 5 6; do
				printf "\\$(printf %o "$m")\\3\\0\\4\\1\\2\\5\\3\\7" >"$c/bt-mode$m"
				printf "\\$(printf %o $((m | 48)))\\2\\1\\34\\1\\0\\3\\0\\0\\4\\5" >"$c/tree-mode$m"
			done
			printf '\0\1\2\2\201\1\1\1' >"$c/bt-deep"
			printf '\20\1\1\330\1\0\0\0\0\0\0' >"$c/tree-chain"
			printf '\0\1\1\34\1\0\0\0\0\100' >"$c/tree-wide"
		fi
		if [ "$t" = fuzz_progress ]; then
			# generator programs (fuzz_progress.c, 'G'): samples x processes x threads,
			# flags, then per sample the moving threads, churn, time and CPU steps
			printf 'G\1\0\20\0\0\1\0\1\0\1\1\0\1\0\1' >"$c/gen-two-samples"
			printf 'G\202\3\0\20\3\2\3\310\0\5\0\0\310\0\5\7\1\310\0\5' >"$c/gen-many-threads"
			printf 'G\3\1\100\0\377\1\0\144\0\1\3\4\144\0\1\0\0\144\0\1\0\0\144\0\1' >"$c/gen-flags"
			printf 'G\201\0\230\72\0\1\0\1\0\1\1\0\1\0\1' >"$c/gen-15000-threads-moved"
			# JSON: the fixture cores' bt documents as samples of one process (taken 500
			# ms apart, a frame moved in the second), and as ranks, one sampled once
			python3 - "$ROOT/fixtures/core" "$c" <<'PY'
import copy, glob, json, os, sys
for f in sorted(glob.glob(os.path.join(sys.argv[1], "*", "golden", "bt.json")))[:6]:
    name = os.path.basename(os.path.dirname(os.path.dirname(f)))
    bt = json.load(open(f))
    docs = []
    for i in range(3):
        d = copy.deepcopy(bt)
        d["process"] = dict(d.get("process") or {}, pid=100, taken_ms=1000 + 500 * i, cpu_ms=10 * i)
        if i == 2 and d.get("threads") and d["threads"][0].get("frames"):
            d["threads"][0]["frames"][-1]["pc"] = "0x1"
        docs.append(d)
    ranks = []
    for r, n in ((0, 2), (1, 2), (2, 1)):
        for i in range(n):
            d = copy.deepcopy(docs[i])
            d["task"] = r
            ranks.append(d)
    for what, v in (("samples", docs), ("ranks", ranks)):
        with open(os.path.join(sys.argv[2], f"{what}-{name}"), "w") as out:
            json.dump(v, out, separators=(",", ":"))
PY
		fi
		if [ -d "$gen/$t" ]; then cp "$gen/$t"/* "$c/"; fi
		for d in "$ROOT/fuzz/seeds/$t" "$ROOT/fuzz/regressions/$t"; do
			if [ -d "$d" ] && [ -n "$(ls -A "$d")" ]; then cp "$d"/* "$c/"; fi
		done
		echo "seeds.sh: $c: $(ls "$c" | wc -l) inputs"
	done
}

case ${1:-} in
data) data ;;
corpus) shift; corpus "$@" ;;
*) echo "usage: fuzz/seeds.sh data | corpus [TARGET...]" >&2; exit 2 ;;
esac
