"""The records of a classic pcap file, streamed (a capture of the -a runs is
hundreds of MB: never held whole).  Shared by icrc_check.py and
../check_payload.py."""
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
