"""The records of a classic pcap file, streamed (a capture of the -a runs is
hundreds of MB: never held whole), and the BTH of its RoCEv2 frames.
Shared by icrc_check.py, ../check_payload.py and ../peer_stall.py."""
import struct


def records(path):
    """(frame bytes, length on the wire) of each record, in order."""
    with open(path, "rb") as f:
        hdr = f.read(24)
        magic = struct.unpack("<I", hdr[:4])[0]
        end = "<" if magic in (0xa1b2c3d4, 0xa1b23c4d) else ">"
        while True:
            rec = f.read(16)
            if len(rec) < 16:
                return
            incl, orig = struct.unpack(end + "II", rec[8:16])
            yield f.read(incl), orig


def roce(frame):
    """(source IPv4, destination IPv4, UDP payload: BTH to ICRC) of a RoCEv2
    frame over IPv4 without VLAN, else None."""
    if len(frame) < 14 + 20 or frame[12:14] != b"\x08\x00":
        return None
    ip = frame[14:]
    ihl = (ip[0] & 0x0f) * 4
    if ip[9] != 17:
        return None
    udp = ip[ihl:]
    if len(udp) < 8 + 12 or struct.unpack(">H", udp[2:4])[0] != 4791:
        return None
    return ip[12:16], ip[16:20], udp[8:struct.unpack(">H", udp[4:6])[0]]
