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
ALL="fuzz_core fuzz_linkmap fuzz_tls fuzz_bundle fuzz_callbacks"

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
