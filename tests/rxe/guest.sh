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
wait_listen() { for i in $(seq 1 150); do ss -Hltn "sport = :$1" | grep -q . && return 0; sleep 0.2; done; return 1; }
fails=0
while IFS='|' read -r name role cmd; do
  [ -n "$name" ] || continue
  echo "=== $name: guest $role: $cmd"
  if [ "$role" = server ]; then
    timeout "$T" bash -c "$cmd" > "$SHARE/$name.guest.log" 2>&1 & pid=$!
    wait_listen 18515 || echo "(not listening on 18515 yet)"
    touch "$SHARE/$name.go"
    wait $pid; rc=$?
  else
    wait_file "$SHARE/$name.go" 60 || echo "(the node never said go)"
    timeout "$T" bash -c "$cmd" > "$SHARE/$name.guest.log" 2>&1; rc=$?
  fi
  cat "$SHARE/$name.guest.log"
  # written whole, then renamed: the host must not read the file empty
  echo "$rc" > "$SHARE/$name.guest-rc.tmp" && mv "$SHARE/$name.guest-rc.tmp" "$SHARE/$name.guest-rc"
  echo "--- $name: guest rc $rc"
  [ "$rc" = 0 ] || fails=$((fails + 1))
  wait_file "$SHARE/$name.host-rc" "$T" || echo "(no host verdict for $name)"
done < "$SHARE/plan"
echo "rxe counters: $(rdma statistic show link rxe0/1 2>/dev/null)"
echo "guest: $fails scenario(s) failed"
[ "$fails" = 0 ]
