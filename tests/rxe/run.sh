#!/bin/bash
# Interop with Linux Soft-RoCE: ethereal-node against ibv_rc_pingpong,
# perftest and rdmacm-utils in a Debian 12 guest (tests/rxe/vm, qemu TCG),
# one boot for every scenario of the plan; then every RoCEv2 frame of the
# capture, ours and rxe's, must pass the ICRC check, and every CM MAD
# tshark's dissector.
#   run.sh ETHEREAL_NODE [PLAN]     (PLAN: tests/rxe/plan by default)
# The guest image is built once and cached outside the repository
# (RXE_VM_DIR, /var/tmp/rxe-vm).  Exit 77 (meson: skipped), saying why, only
# where a boot is impossible: not root, or no qemu after installing.
set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
NODE=$(realpath "${1:?usage: run.sh ETHEREAL_NODE [PLAN]}")
PLAN=$(realpath "${2:-$HERE/plan}")
skip() { echo "SKIP rxe interop: $*"; [ -n "${CI:-}" ] && exit 1; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root (network namespace, bridge, tap)"
[ -c /dev/net/tun ] || skip "no /dev/net/tun for the guest's tap"
if ! "$HERE/vm/build.sh" > "${TMPDIR:-/tmp}/rxe-build.log" 2>&1; then
  tail -n 30 "${TMPDIR:-/tmp}/rxe-build.log"
  command -v qemu-system-x86_64 > /dev/null || skip "qemu-system-x86_64 missing and not installable"
  echo "FAIL rxe interop: the guest image did not build"
  exit 1
fi
# boot.sh's own limit, inside meson's 900 s, so that its account is printed
RXE_TIMEOUT=${RXE_TIMEOUT:-840} RXE_QUIET=1 RXE_PEER_VETH=1 RXE_HOST_HOOK="$HERE/host.sh" ET_PLAN="$PLAN" ET_NODE="$NODE" \
  "$HERE/vm/boot.sh" "$HERE/guest.sh" > "${TMPDIR:-/tmp}/rxe-boot.log" 2>&1
rc=$?
RUN=${RXE_VM_DIR:-/var/tmp/rxe-vm}/runs/latest
cat "$RUN/host-hook.log" 2>/dev/null
echo "--- guest"
cat "$RUN/share/guest.log" 2>/dev/null | grep -E "^(===|---|guest:|rxe counters)" 
echo "--- boot.sh"
grep "^\[boot.sh" "${TMPDIR:-/tmp}/rxe-boot.log"
sed -n '/^--- ICRC/,$p' "${TMPDIR:-/tmp}/rxe-boot.log"
# RDMA CM's scenarios: every MAD to QP 1, ours and the kernel's, decoded
# by tshark's InfiniBand dissector with nothing malformed
mads=0
if grep -q -- "--oob cm" "$PLAN"; then
  echo "--- RDMA CM MADs on the tap (check_mads.py)"
  /usr/bin/python3 "$HERE/check_mads.py" "$RUN/tap.pcap" 10.77.0.3 10.77.0.2 || mads=1
fi
# last, where a CI log's tail shows it: which scenarios failed or were retried
echo "--- scenarios"
grep -E "^(FAIL|RETRY|host:)" "$RUN/host-hook.log" 2>/dev/null
[ "$rc" = 0 ] && [ "$mads" = 0 ] && grep -q "^checked [1-9][0-9]* frames, 0 bad" "${TMPDIR:-/tmp}/rxe-boot.log" \
  || { echo "FAIL rxe interop (boot.sh exit $rc); the run: $RUN"; exit 1; }
echo "ok rxe interop"
