#!/bin/bash
# Host side of the interop run (boot.sh's RXE_HOST_HOOK, inside the netns
# once the guest's rxe0 is up): writes the plan the guest follows, then for
# each scenario runs ethereal-node on net_af_packet over the veth rxe-peer
# as 10.77.0.3, its management TCP on the bridge (10.77.0.1).
#   ET_NODE      ethereal-node
#   ET_PLAN      the plan: lines "NAME|GUEST_ROLE|GUEST_COMMAND|NODE_ARGS"
#                (the guest gets the first three fields); NODE_ARGS
#                "run: [--fault SPEC] PROGRAM ARGS" runs Debian's PROGRAM
#                itself on our libibverbs and librdmacm (scripts/ethereal-run)
#                in the node's place: same port and address
# Where the node is the server, or a READ client, what rxe sent is captured
# on the veth and the last message (or READ) must be in the node's memory
# (check_payload.py).
set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
NODE=${ET_NODE:?ET_NODE: path of ethereal-node}
PLAN=${ET_PLAN:?ET_PLAN: the scenario plan}
T=${RXE_TEST_TIMEOUT:-120}
# DPDK's messages at errors, ours at info: "waiting for the peer" is awaited
EAL=(--no-huge --no-shconf --no-pci -m 1024 -l 0 --no-telemetry --log-level='*:error'
     --log-level='ethereal.*:info' --vdev=net_af_packet0,iface=rxe-peer)
wait_file() { for i in $(seq 1 $((4 * $2))); do [ -f "$1" ] && return 0; sleep 0.25; done; return 1; }
# a stock program's runtime: the build of the node, the link's MTU (rxe's,
# 1024 on a 1500 link: perftest tells its peer none), the node's address
BUILD=$(cd "$(dirname "$NODE")/.." && pwd)
STOCK_DIR=$RXE_RUN/stock
mkdir -p "$STOCK_DIR"
printf '[topology]\nkind = leaf-spine\nleaves = 1\nspines = 1\nhosts-per-leaf = 2\n[link]\nmtu = 1024\n' \
  > "$STOCK_DIR/rxe.ini"
# ours ARGS...: ethereal-node with ARGS before the row's NODE_ARGS, or the
# row's stock program (ARGS unused: it finds its peer by its own arguments)
ours() {
  if [[ $args == run:* ]]; then
    local prog=${args#run: } fault=()
    if [[ $prog == --fault\ * ]]; then
      prog=${prog#--fault }
      fault=(--fault "${prog%% *}")
      prog=${prog#* }
    fi
    # shellcheck disable=SC2086 # the program's words
    timeout "$T" "$HERE/../../scripts/ethereal-run" --build "$BUILD" \
      --dev net_af_packet0,iface=rxe-peer --ip 10.77.0.3 --conf "$STOCK_DIR/rxe.ini" \
      --rundir "$STOCK_DIR" --yield --stats 1 "${fault[@]}" -- $prog
  else
    # shellcheck disable=SC2086 # NODE_ARGS are words
    timeout "$T" "$NODE" "${EAL[@]}" --file-prefix="rxe$$" -- --port net_af_packet0 \
      --ip 10.77.0.3 "$@" $args
  fi
}
# a stock server is ready: listening on TCP (perftest's exchange), or, by
# RDMA CM (-R, rping), its runtime up (its slot's lock) and a second on
ready() {
  if [[ $args != run:* ]]; then
    grep -q "waiting for the peer" "$out"
  elif [[ $args == *" -R"* || $args == *rping* ]]; then
    compgen -G "$STOCK_DIR/*.lock" > /dev/null && sleep 1
  else
    ss -Hltn "sport = :18515" | grep -q .
  fi
}
scenarios=$(grep -v '^#' "$PLAN" | grep .)
cut -d'|' -f1-3 <<< "$scenarios" > "$RXE_SHARE/plan.tmp"
mv "$RXE_SHARE/plan.tmp" "$RXE_SHARE/plan"
# one attempt at a scenario: TAG names its files in the share ("NAME", or
# "NAME.2" for the retry); sets rc (the node's) and out (its log)
attempt() {
  local tag=$1 role=$2 args=$3 cap dump pid
  out=$RXE_RUN/$tag.node.log
  if [ "$role" = server ] && [[ "$args" == *"--mode read_"* ]]; then
    # the node reads: what rxe answered is captured, its last READ checked
    cap=$RXE_RUN/$tag.pcap
    tcpdump -i rxe-peer-br -s 0 -B 65536 -U --immediate-mode -w "$cap" "udp port 4791 and host 10.77.0.3" \
      2> "$RXE_RUN/$tag.tcpdump.log" & dump=$!
    wait_file "$RXE_SHARE/$tag.go" 60 || echo "(the guest never said go)"
    ours --client "$RXE_GUEST" --save "$RXE_RUN/$tag.mem" > "$out" 2>&1; rc=$?
    sleep 0.5; kill -INT $dump; wait $dump
    grep -h "dropped by kernel" "$RXE_RUN/$tag.tcpdump.log"
    if [ "$rc" = 0 ] && [[ $args != run:* ]]; then
      /usr/bin/python3 "$HERE/check_payload.py" "$cap" "$RXE_RUN/$tag.mem" 10.77.0.3 0x100 || rc=1
    fi
  elif [ "$role" = server ]; then
    wait_file "$RXE_SHARE/$tag.go" 60 || echo "(the guest never said go)"
    ours --client "$RXE_GUEST" > "$out" 2>&1; rc=$?
  else
    # both ways: what rxe sent (check_payload.py) and what we answered (peer_stall.py),
    # on the veth's bridge end: on rxe-peer itself tcpdump saw none of the node's frames
    # (DPDK's af_packet port sends with qdisc bypass by default, past the capture taps)
    cap=$RXE_RUN/$tag.pcap
    tcpdump -i rxe-peer-br -s 0 -B 65536 -U --immediate-mode -w "$cap" "udp port 4791 and host 10.77.0.3" \
      2> "$RXE_RUN/$tag.tcpdump.log" & dump=$!
    ours --server --save "$RXE_RUN/$tag.mem" > "$out" 2>&1 & pid=$!
    for i in $(seq 1 200); do ready && break; sleep 0.1; done
    touch "$RXE_SHARE/$tag.go"
    wait $pid; rc=$?
    sleep 0.5; kill -INT $dump; wait $dump
    grep -h "dropped by kernel" "$RXE_RUN/$tag.tcpdump.log"
    # rxe reads the node's memory or works on it: no message of its to check
    # (rping: the node reads rxe's buffer and writes it back; rping -V
    # checks the echo, the node's --verify what it read)
    if [ "$rc" = 0 ] && ! [[ "$args" =~ --mode\ (read_|atomic_|rping) ]] && [[ $args != run:* ]]; then
      # the node's QP 0 is QPN 0x100: its last message is where --save starts
      /usr/bin/python3 "$HERE/check_payload.py" "$cap" "$RXE_RUN/$tag.mem" 10.77.0.3 0x100 || rc=1
    fi
  fi
  cat "$out"
  # the guest's tool has no peer any more: stop it rather than wait out its timeout
  [ "$rc" = 0 ] || touch "$RXE_SHARE/$tag.abort"
}
# the node waited in vain for rxe, and rxe had nothing unacknowledged
rxe_stalled() {
  grep -q "nothing from the peer for" "$out" && [ -f "$RXE_RUN/$1.pcap" ] &&
    /usr/bin/python3 "$HERE/peer_stall.py" "$RXE_RUN/$1.pcap" 10.77.0.3
}
verdict() { # TAG VALUE: written whole, then renamed (the guest must not read it empty)
  echo "$2" > "$RXE_SHARE/$1.host-rc.tmp" && mv "$RXE_SHARE/$1.host-rc.tmp" "$RXE_SHARE/$1.host-rc"
}
fails=0
retried=()
while IFS='|' read -r name role cmd args; do
  [ -n "$name" ] || continue
  echo "=== $name: node $( [ "$role" = server ] && echo client || echo server ): $args"
  tag=$name
  attempt "$tag" "$role" "$args"
  if [ "$rc" != 0 ] && rxe_stalled "$tag"; then
    echo "RETRY $name: rxe went silent with every packet acknowledged (a stall of rxe's, see peer_stall.py)"
    retried+=("$name")
    wait_file "$RXE_SHARE/$tag.guest-rc" "$T" || echo "(no guest verdict for $tag)"
    verdict "$tag" again
    tag=$name.2
    attempt "$tag" "$role" "$args"
  fi
  [ "$rc" = 0 ] && rm -f "$RXE_RUN/$tag.pcap" "$RXE_RUN/$tag.mem"
  wait_file "$RXE_SHARE/$tag.guest-rc" "$T" || echo "(no guest verdict for $tag)"
  grc=$(cat "$RXE_SHARE/$tag.guest-rc" 2>/dev/null || echo none)
  verdict "$tag" "$rc"
  if [ "$rc" = 0 ] && [ "$grc" = 0 ]; then
    echo "ok   $name"
  else
    echo "FAIL $name: node rc $rc, guest rc $grc"
    sed 's/^/guest: /' "$RXE_SHARE/$tag.guest.log" 2>/dev/null
    fails=$((fails + 1))
  fi
done <<< "$scenarios"
[ ${#retried[@]} = 0 ] || echo "host: retried once after a stall of rxe's: ${retried[*]}"
echo "host: $fails scenario(s) failed"
[ "$fails" = 0 ]
