#!/usr/bin/env bash
# Install the Debian 12 packages the project builds, tests and runs with.
# Only what is missing is installed; needs root (or sudo) the first time.
# --list prints the package names and installs nothing.
set -euo pipefail

packages=(
	gcc clang meson ninja-build pkg-config
	libdpdk-dev libnuma-dev libcmocka-dev libisal-dev
	dpdk-dev                    # dpdk-telemetry.py, the telemetry client README shows
	libjansson-dev              # the programs' JSON results (app/common)
	libclang-rt-14-dev          # libFuzzer runtime for -Dfuzz=true
	python3 python3-scapy tshark # independent RoCEv2 decoders for the interop tests
	iproute2                     # veth pairs and bridged taps in the node tests
	python3-matplotlib           # the sweep's plots
	openmpi-bin                  # mpirun, the launcher scripts/testbed can use
	libfabric-dev libfabric-bin  # the libfabric provider (prov/) and its package build against it; fi_info
	autoconf automake libtool make # fabtests, built by a test from ../shared/third-party
	libopenmpi-dev g++           # mpicc for IMB-MPI1 (../shared/third-party), MPI over the provider
	libibverbs-dev               # verbs.h: the ABI of our libibverbs (verbs/)
	ibverbs-utils perftest       # unmodified RDMA programs on it (tests/check_verbs.py)
	librdmacm-dev rdmacm-utils   # rdma_cma.h: the ABI of our librdmacm; rping, ucmatose on it
	ucx-utils                    # ucx_perftest: UCX's rc_verbs and ud_verbs on our libibverbs
	mpich libmpich-dev           # MPICH (on UCX) over our libibverbs (tests/check_mpich.py)
	netpipe-openmpi              # NetPIPE, the testbed benchmark's reference (bench/testbed_bench.py)
	# the Linux Soft-RoCE peer (tests/rxe): a Debian guest under qemu
	qemu-system-x86 qemu-utils debootstrap e2fsprogs tcpdump iputils-ping
	# the Debian packages (debian/), built, linted and tried by the packages test
	build-essential debhelper    # dpkg-buildpackage and dh (dpkg-buildpackage wants build-essential)
	lintian                      # the packages' checks: no error allowed
	man-db                       # man, to read the installed man pages
)

if [ "${1:-}" = "--list" ]; then
	echo "${packages[@]}"
	exit 0
fi

missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

as_root=()
if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null || { echo "deps: need root to install: ${missing[*]}" >&2; exit 1; }
	as_root=(sudo)
fi
echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -q
"${as_root[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
