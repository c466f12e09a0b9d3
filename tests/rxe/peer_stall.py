#!/usr/bin/python3
"""Did the peer go silent with nothing outstanding?

peer_stall.py CAPTURE NODE_IP

CAPTURE: both directions of the RoCEv2 traffic of NODE_IP (tcpdump on the
veth).  Exit 0, saying so, when for every QP of ours that received data the
last data packet the peer sent was acknowledged by an ACK of ours carrying
its PSN: the peer then had nothing outstanding and no reason to wait.  Exit 1
otherwise (something was lost or never acknowledged: the transport's own
recovery had work to do).

Why: Linux 6.1's rxe in the guest has been seen to stop sending in the
middle of an 8 MiB SEND (ib_send_bw -a) and never resume; its retransmit
timer resends only what is unacknowledged, so nothing ever restarted it.
The interop run retries a scenario once on this evidence, and only on it.
"""
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "vm"))
from pcap_frames import records, roce  # noqa: E402

ACKNOWLEDGE = 0x11
# RC SEND and RDMA WRITE, first/middle/last/only, with and without immediate
DATA = set(range(0x00, 0x0c))


def main():
    cap, node_ip = sys.argv[1:3]
    node = bytes(int(x) for x in node_ip.split("."))
    last = {}        # our QPN -> PSN of the last data packet to it
    unacked = set()  # our QPNs whose last data packet no ACK of ours named yet
    for frame, _ in records(cap):
        hdrs = roce(frame)
        if hdrs is None or len(hdrs[2]) < 16:
            continue
        src, dst, bth = hdrs
        qpn = struct.unpack(">I", b"\0" + bth[5:8])[0]
        psn = struct.unpack(">I", b"\0" + bth[9:12])[0]
        if dst == node and bth[0] in DATA:
            last[qpn] = psn
            unacked.add(qpn)
        elif src == node and bth[0] == ACKNOWLEDGE and bth[12] >> 5 == 0:
            unacked -= {q for q in unacked if last[q] == psn}
    if not last:
        sys.exit("no data packets to us in the capture")
    for q in sorted(last):
        state = "unacknowledged" if q in unacked else "acknowledged"
        print(f"QP {q:#x}: the peer's last data packet, PSN {last[q]:#08x}, {state}")
    sys.exit(1 if unacked else 0)


if __name__ == "__main__":
    main()
