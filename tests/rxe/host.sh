#!/bin/bash
# Host side of the interop run (boot.sh's RXE_HOST_HOOK, inside the netns
# once the guest's rxe0 is up): writes the plan the guest follows, then for
# each scenario runs ethereal-node on net_af_packet over the veth rxe-peer
# as 10.77.0.3, its management TCP on the bridge (10.77.0.1).
#   ET_NODE      ethereal-node
#   ET_PLAN      the plan: lines "NAME|GUEST_ROLE|GUEST_COMMAND|NODE_ARGS"
#                (the guest gets the first three fields)
# Where the node is the server, what rxe sent is captured on the veth and
# the last message must be in the node's memory (check_payload.py).
set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
NODE=${ET_NODE:?ET_NODE: path of ethereal-node}
PLAN=${ET_PLAN:?ET_PLAN: the scenario plan}
T=${RXE_TEST_TIMEOUT:-120}
# DPDK's messages at errors, ours at info: "waiting for the peer" is awaited
EAL=(--no-huge --no-shconf --no-pci -m 1024 -l 0 --no-telemetry --log-level='*:error'
     --log-level='ethereal.*:info' --vdev=net_af_packet0,iface=rxe-peer)
wait_file() { for i in $(seq 1 $((4 * $2))); do [ -f "$1" ] && return 0; sleep 0.25; done; return 1; }
scenarios=$(grep -v '^#' "$PLAN" | grep .)
cut -d'|' -f1-3 <<< "$scenarios" > "$RXE_SHARE/plan.tmp"
mv "$RXE_SHARE/plan.tmp" "$RXE_SHARE/plan"
fails=0
while IFS='|' read -r name role cmd args; do
  [ -n "$name" ] || continue
  out=$RXE_RUN/$name.node.log
  echo "=== $name: node $( [ "$role" = server ] && echo client || echo server ): $args"
  # shellcheck disable=SC2086 # NODE_ARGS are words
  if [ "$role" = server ]; then
    wait_file "$RXE_SHARE/$name.go" 60 || echo "(the guest never said go)"
    timeout "$T" "$NODE" "${EAL[@]}" --file-prefix="rxe$$" -- --port net_af_packet0 \
      --ip 10.77.0.3 --client "$RXE_GUEST" $args > "$out" 2>&1; rc=$?
  else
    cap=$RXE_RUN/$name.pcap
    tcpdump -i rxe-peer -s 0 -B 65536 -U --immediate-mode -w "$cap" "udp dst port 4791 and dst host 10.77.0.3" \
      2> "$RXE_RUN/$name.tcpdump.log" & dump=$!
    timeout "$T" "$NODE" "${EAL[@]}" --file-prefix="rxe$$" -- --port net_af_packet0 \
      --ip 10.77.0.3 --server --save "$RXE_RUN/$name.mem" $args > "$out" 2>&1 & pid=$!
    for i in $(seq 1 200); do grep -q "waiting for the peer" "$out" && break; sleep 0.1; done
    touch "$RXE_SHARE/$name.go"
    wait $pid; rc=$?
    sleep 0.5; kill -INT $dump; wait $dump
    grep -h "dropped by kernel" "$RXE_RUN/$name.tcpdump.log"
    if [ "$rc" = 0 ]; then
      # the node's QP 0 is QPN 0x100: its last message is where --save starts
      /usr/bin/python3 "$HERE/check_payload.py" "$cap" "$RXE_RUN/$name.mem" 10.77.0.3 0x100 || rc=1
    fi
    [ "$rc" = 0 ] && rm -f "$cap" "$RXE_RUN/$name.mem"
  fi
  cat "$out"
  wait_file "$RXE_SHARE/$name.guest-rc" "$T" || echo "(no guest verdict for $name)"
  grc=$(cat "$RXE_SHARE/$name.guest-rc" 2>/dev/null || echo none)
  echo "$rc" > "$RXE_SHARE/$name.host-rc.tmp" && mv "$RXE_SHARE/$name.host-rc.tmp" "$RXE_SHARE/$name.host-rc"
  if [ "$rc" = 0 ] && [ "$grc" = 0 ]; then
    echo "ok   $name"
  else
    echo "FAIL $name: node rc $rc, guest rc $grc"
    sed 's/^/guest: /' "$RXE_SHARE/$name.guest.log" 2>/dev/null
    fails=$((fails + 1))
  fi
done <<< "$scenarios"
echo "host: $fails scenario(s) failed"
[ "$fails" = 0 ]
