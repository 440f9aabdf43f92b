#!/bin/bash
# Install the Debian packages coreq needs to build and test (bookworm, as root).
# Idempotent: packages already present are not fetched again.
#   tools/install-deps.sh          build + test dependencies
#   tools/install-deps.sh --build  only what building build/coreq needs
set -eu
build_pkgs=(make gcc binutils-multiarch-dev libdw-dev libelf-dev libdebuginfod-dev libjansson-dev zlib1g-dev libzstd-dev liblzma-dev liblz4-dev libbz2-dev libomp-14-dev)
# libopenmpi3: Open MPI's message-queue DLL and the libraries the x86_64 MPI fixture cores
# name; libopenmpi-dev: the headers `coreq donor` builds a type donor from (install.py);
# graphviz: the job view's SVG; debuginfod: the server tests/fixture/debuginfod.py runs;
# lammps, hpcc, openmpi-bin: the real hung jobs tests/fixture/mqd_apps.py runs (mpirun);
# openfoam, openfoam-examples, quantum-espresso, quantum-espresso-data: the same for
# tools/fixtures/mpi/app-cores.sh's foam-* (icoFoam, cavity) and qe-* (pw.x, PW/example01
# Si and its pseudopotential) cases;
# libblas3, liblapack3, libgfortran5: what Debian's ScaLAPACK tests need (mqd_mpich.py
# downloads and unpacks them, never installs them: they would bring Debian's MPICH);
# strace: another tracer on one thread (tests/fixture/live_bounds.py); util-linux: setpriv,
# prlimit (app-cores.sh's killed cases), unshare (the Slurm nodes' namespaces);
# slurmctld, slurmd, slurm-client, munge, slurm-wlm-basic-plugins, libpmix-dev: the Slurm
# cluster tools/fixtures/slurm/cluster.sh starts for tests/fixture/slurm.py (srun
# --mpi=pmix needs libpmix-dev's libpmix.so; the cluster uses none of their services)
test_pkgs=(python3 jq elfutils gdb-multiarch clang-14 libclang-rt-14-dev libopenmpi-dev
	gcc-12-i686-linux-gnu libc6-i386 qemu-user-static valgrind libopenmpi3 graphviz zstd xz-utils lz4
	debuginfod lammps hpcc openfoam openfoam-examples quantum-espresso quantum-espresso-data
	openmpi-bin libblas3 liblapack3 libgfortran5 strace util-linux
	slurmctld slurmd slurm-client munge slurm-wlm-basic-plugins libpmix-dev)
pkgs=("${build_pkgs[@]}")
[ "${1:-}" = --build ] || pkgs+=("${test_pkgs[@]}")

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q >/dev/null || true   # a failing secondary index must not stop us
# --no-remove: gcc-multilib and the cross compilers exclude each other; never trade one away
$SUDO apt-get install -y -q --no-remove "${missing[@]}" >/dev/null
