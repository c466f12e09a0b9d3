/* SPDX-License-Identifier: BSD-3-Clause
 * pcapng capture of one port: one file, one interface, nanosecond
 * timestamps from whatever clock the caller runs on (the TSC in real time,
 * the fabric's virtual clock), direction flags on every packet.  Our own
 * writer rather than rte_pcapng: that one names interfaces by ethdev port
 * and stamps TSC time, and a fabric's ring-backed ports have neither.
 */
#ifndef ET_CAPTURE_H
#define ET_CAPTURE_H

#include <stdbool.h>
#include <stdint.h>

struct rte_mbuf;
struct et_capture;

struct et_capture *et_capture_open(const char *path, const char *ifname);
/* Record frames (not consumed).  out: sent by us, else received. */
void et_capture_frames(struct et_capture *c, struct rte_mbuf *const *m, uint16_t n,
		       bool out, uint64_t ts_ns);
void et_capture_close(struct et_capture *c);
uint64_t et_capture_count(const struct et_capture *c);

#endif /* ET_CAPTURE_H */
