/* SPDX-License-Identifier: BSD-3-Clause
 * The RDMA tools' out-of-band messages: formats from the tools' behaviour
 * on the wire (fixed-width lower-case hex, ':'-separated, NUL-terminated,
 * always the full fixed size), parsed strictly so a wrong peer is named.
 */
#include "host/et_oob_tools.h"

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "base/et_bits.h"
#include "base/et_bytes.h"

static int
fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

static int
hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Exactly width hex digits at *p, then sep (or nothing when sep is 0). */
static bool
hex_field(const char **p, int width, char sep, uint64_t *v)
{
	uint64_t x = 0;

	for (int i = 0; i < width; i++) {
		int h = hexval((*p)[i]);

		if (h < 0)
			return false;
		x = x << 4 | (uint64_t)h;
	}
	*p += width;
	if (sep) {
		if (**p != sep)
			return false;
		(*p)++;
	}
	*v = x;
	return true;
}

/* 16 GID bytes as 2 hex digits each, each followed by sep (0: none). */
static bool
hex_gid(const char **p, char sep, uint8_t gid[16])
{
	uint64_t b;

	for (int i = 0; i < 16; i++) {
		if (!hex_field(p, 2, sep, &b))
			return false;
		gid[i] = (uint8_t)b;
	}
	return true;
}

/* A whole message: the full fixed size, NUL-terminated, nothing after. */
static int
check_frame(const char *msg, size_t len, size_t want, const char *tool, char *err, size_t errlen)
{
	if (len != want)
		return fail(err, errlen, "%s message of %zu bytes, expected %zu", tool, len, want);
	if (memchr(msg, '\0', want) != msg + want - 1)
		return fail(err, errlen, "%s message is not %zu characters and a NUL", tool, want - 1);
	return 0;
}

void
et_pingpong_format(const struct et_oob_dest *d, char out[ET_PINGPONG_MSG_LEN])
{
	int n = snprintf(out, ET_PINGPONG_MSG_LEN, "%04x:%06x:%06x:", d->lid, d->qpn & 0xffffff,
			 d->psn & 0xffffff);

	for (int i = 0; i < 16; i++)
		n += snprintf(out + n, (size_t)(ET_PINGPONG_MSG_LEN - n), "%02x", d->gid[i]);
}

int
et_pingpong_parse(const char *msg, size_t len, struct et_oob_dest *d, char *err, size_t errlen)
{
	const char *p = msg;
	uint64_t lid, qpn, psn;

	if (check_frame(msg, len, ET_PINGPONG_MSG_LEN, "ibv_rc_pingpong", err, errlen))
		return -1;
	memset(d, 0, sizeof(*d));
	if (!hex_field(&p, 4, ':', &lid) || !hex_field(&p, 6, ':', &qpn) ||
	    !hex_field(&p, 6, ':', &psn))
		return fail(err, errlen, "ibv_rc_pingpong message '%.51s': expected LID:QPN:PSN:GID", msg);
	if (!hex_gid(&p, 0, d->gid))
		return fail(err, errlen, "ibv_rc_pingpong message '%.51s': bad GID", msg);
	d->lid = (uint16_t)lid;
	d->qpn = (uint32_t)qpn;
	d->psn = (uint32_t)psn;
	return 0;
}

/* "LID:OUT_READS:QPN:PSN:RKEY:VADDR:" then the 16 GID bytes each as
 * "xx:", then "SRQN:" */
void
et_perftest_format(const struct et_oob_dest *d, char out[ET_PERFTEST_MSG_LEN])
{
	int n = snprintf(out, ET_PERFTEST_MSG_LEN, "%04x:%04x:%06x:%06x:%08x:%016llx:", d->lid,
			 d->out_reads, d->qpn & 0xffffff, d->psn & 0xffffff, d->rkey,
			 (unsigned long long)d->vaddr);

	for (int i = 0; i < 16; i++)
		n += snprintf(out + n, (size_t)(ET_PERFTEST_MSG_LEN - n), "%02x:", d->gid[i]);
	snprintf(out + n, (size_t)(ET_PERFTEST_MSG_LEN - n), "%08x:", d->srqn);
}

int
et_perftest_parse(const char *msg, size_t len, struct et_oob_dest *d, char *err, size_t errlen)
{
	const char *p = msg;
	uint64_t lid, reads, qpn, psn, rkey, vaddr, srqn;

	if (check_frame(msg, len, ET_PERFTEST_MSG_LEN, "perftest", err, errlen))
		return -1;
	memset(d, 0, sizeof(*d));
	if (!hex_field(&p, 4, ':', &lid) || !hex_field(&p, 4, ':', &reads) ||
	    !hex_field(&p, 6, ':', &qpn) || !hex_field(&p, 6, ':', &psn) ||
	    !hex_field(&p, 8, ':', &rkey) || !hex_field(&p, 16, ':', &vaddr))
		return fail(err, errlen, "perftest message '%.107s': expected "
				"LID:OUT_READS:QPN:PSN:RKEY:VADDR:GID:SRQN:", msg);
	if (!hex_gid(&p, ':', d->gid))
		return fail(err, errlen, "perftest message '%.107s': bad GID", msg);
	if (!hex_field(&p, 8, ':', &srqn))
		return fail(err, errlen, "perftest message '%.107s': bad SRQN", msg);
	d->lid = (uint16_t)lid;
	d->out_reads = (uint16_t)reads;
	d->qpn = (uint32_t)qpn;
	d->psn = (uint32_t)psn;
	d->rkey = (uint32_t)rkey;
	d->vaddr = vaddr;
	d->srqn = (uint32_t)srqn;
	return 0;
}

void
et_perftest_bin_format(const struct et_oob_dest *d, uint8_t out[ET_PERFTEST_BIN_LEN])
{
	memset(out, 0, ET_PERFTEST_BIN_LEN);
	et_store32(out, d->lid);
	et_store32(out + 4, d->out_reads);
	et_store32(out + 8, d->qpn);
	et_store32(out + 12, d->psn);
	et_store32(out + 16, d->rkey);
	et_store64(out + 24, d->vaddr);
	memcpy(out + 32, d->gid, 16);
	et_store32(out + 48, d->srqn);
}

int
et_perftest_bin_parse(const uint8_t *msg, size_t len, struct et_oob_dest *d, char *err,
		      size_t errlen)
{
	uint32_t qpn, psn;

	memset(d, 0, sizeof(*d));
	if (len != ET_PERFTEST_BIN_LEN)
		return fail(err, errlen, "perftest -R message of %zu bytes where its address "
				"message (%d) belongs: the peer is at another step", len,
				ET_PERFTEST_BIN_LEN);
	qpn = et_load32(msg + 8);
	psn = et_load32(msg + 12);
	if (qpn > 0xffffff || psn > 0xffffff)
		return fail(err, errlen, "perftest -R address message: QPN 0x%x, PSN 0x%x beyond "
				"24 bits: not an address message", qpn, psn);
	d->lid = (uint16_t)et_load32(msg);
	d->out_reads = (uint16_t)et_load32(msg + 4);
	d->qpn = qpn;
	d->psn = psn;
	d->rkey = et_load32(msg + 16);
	d->vaddr = et_load64(msg + 24);
	memcpy(d->gid, msg + 32, 16);
	d->srqn = et_load32(msg + 48);
	return 0;
}

void
et_perftest_report_format(const struct et_perftest_report *r,
			  uint8_t out[ET_PERFTEST_REPORT_LEN])
{
	et_store64(out, r->size);
	et_store64(out + 8, r->iters);
	et_store64(out + 16, et_f64_bits(r->bw_peak));
	et_store64(out + 24, et_f64_bits(r->bw_avg));
	et_store64(out + 32, et_f64_bits(r->msg_rate));
}

/* Eight bytes of an address message ("0000:000" ...): hex digits and ':'. */
static bool
looks_like_text(const uint8_t *p)
{
	for (int i = 0; i < 8; i++)
		if (hexval((char)p[i]) < 0 && p[i] != ':')
			return false;
	return true;
}

int
et_perftest_report_parse(const uint8_t msg[ET_PERFTEST_REPORT_LEN], struct et_perftest_report *r,
			 char *err, size_t errlen)
{
	for (int f = 0; f < 5; f++)
		if (looks_like_text(msg + 8 * f))
			return fail(err, errlen, "perftest report: '%.8s' where a number belongs: "
				    "the peer sent an address message, it is at another step "
				    "of the exchange (another tool, or another QP count)", msg + 8 * f);
	r->size = et_load64(msg);
	r->iters = et_load64(msg + 8);
	r->bw_peak = et_bits_f64(et_load64(msg + 16));
	r->bw_avg = et_bits_f64(et_load64(msg + 24));
	r->msg_rate = et_bits_f64(et_load64(msg + 32));
	if (r->size == 0 || r->size > (1ull << 31))
		return fail(err, errlen, "perftest report: message size %llu is not 1 B .. 2 GiB",
			    (unsigned long long)r->size);
	if (r->iters > (1ull << 40))
		return fail(err, errlen, "perftest report: %llu iterations is not a count",
			    (unsigned long long)r->iters);
	if (!isfinite(r->bw_peak) || !isfinite(r->bw_avg) || !isfinite(r->msg_rate) ||
	    r->bw_peak < 0 || r->bw_avg < 0 || r->msg_rate < 0)
		return fail(err, errlen, "perftest report: figures %g %g %g are not rates",
			    r->bw_peak, r->bw_avg, r->msg_rate);
	return 0;
}
