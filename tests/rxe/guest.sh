#!/bin/bash
# Guest side of the interop run (boot.sh runs it in the rxe-vm guest as
# cmd.sh).  Follows the plan the host hook writes to the share: one line per
# scenario, "NAME|ROLE|COMMAND", ROLE being "server" (our tool listens, the
# node connects) or "client" (the node listens, our tool connects to the
# host).  Each side writes NAME.guest-rc / NAME.host-rc and waits for the
# other's before the next scenario, so the two stay in step.
set -u
SHARE=${RXE_SHARE:-/mnt/share}
T=${RXE_TEST_TIMEOUT:-120}
for i in $(seq 1 120); do [ -f "$SHARE/plan" ] && break; sleep 0.5; done
[ -f "$SHARE/plan" ] || { echo "FAIL: no plan from the host hook"; exit 1; }
wait_file() { for i in $(seq 1 $((4 * $2))); do [ -f "$1" ] && return 0; sleep 0.25; done; return 1; }
# the tool listens: on TCP (its exchange), or by rdma_cm (-R, ucmatose: a
# listening cm_id, no socket)
listening() { ss -Hltn "sport = :18515" | grep -q . || rdma res show cm_id 2>/dev/null | grep -q LISTEN; }
wait_listen() { for i in $(seq 1 150); do listening && return 0; sleep 0.2; done; return 1; }
# one attempt at a scenario: TAG names its files in the share ("NAME", or
# "NAME.2" when the host asks again); sets rc
attempt() {
  local tag=$1 role=$2 cmd=$3 pid
  echo "=== $tag: guest $role: $cmd"
  [ "$role" = server ] || wait_file "$SHARE/$tag.go" 60 || echo "(the node never said go)"
  timeout "$T" bash -c "$cmd" > "$SHARE/$tag.guest.log" 2>&1 & pid=$!
  if [ "$role" = server ]; then
    wait_listen || echo "(not listening yet, on TCP 18515 nor by rdma_cm)"
    touch "$SHARE/$tag.go"
  fi
  # the host gives up when the node failed: the tool would only wait out $T
  while kill -0 $pid 2> /dev/null; do
    [ -f "$SHARE/$tag.abort" ] && { echo "(the node failed: stopping the tool)"; kill $pid; break; }
    sleep 0.25
  done
  wait $pid; rc=$?
  cat "$SHARE/$tag.guest.log"
  # written whole, then renamed: the host must not read the file empty
  echo "$rc" > "$SHARE/$tag.guest-rc.tmp" && mv "$SHARE/$tag.guest-rc.tmp" "$SHARE/$tag.guest-rc"
  echo "--- $tag: guest rc $rc"
  wait_file "$SHARE/$tag.host-rc" "$T" || echo "(no host verdict for $tag)"
}
fails=0
while IFS='|' read -r name role cmd; do
  [ -n "$name" ] || continue
  attempt "$name" "$role" "$cmd"
  # the host saw rxe stall (peer_stall.py) and runs the scenario once more
  [ "$(cat "$SHARE/$name.host-rc" 2>/dev/null)" = again ] && attempt "$name.2" "$role" "$cmd"
  [ "$rc" = 0 ] || fails=$((fails + 1))
done < "$SHARE/plan"
echo "rxe counters: $(rdma statistic show link rxe0/1 2>/dev/null)"
echo "guest: $fails scenario(s) failed"
[ "$fails" = 0 ]
