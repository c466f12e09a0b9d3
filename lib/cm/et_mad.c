/* SPDX-License-Identifier: BSD-3-Clause
 * CM MADs: the fixed layouts of IBTA vol. 1 tables 106-113, as offsets in
 * the 232 bytes after the common header; bit fields are numbered from the
 * most significant bit of their byte, as the spec draws them.
 */
#include "cm/et_mad.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "base/et_bytes.h"

#define D ET_MAD_HDR_LEN /* where the CM's data start */

const char *
et_cm_rej_reason_str(uint16_t reason)
{
	static char other[24];

	switch (reason) {
#define ET_CM_REJ_CASE(n, id, msg) case n: return msg;
	ET_CM_REJ_REASONS(ET_CM_REJ_CASE)
#undef ET_CM_REJ_CASE
	}
	snprintf(other, sizeof(other), "reason %u", reason);
	return other;
}

#define ET_MAD_ERR_NAME(id, name, msg) #name,
static const char *const err_names[] = {"ok", ET_MAD_ERRORS(ET_MAD_ERR_NAME)};
#undef ET_MAD_ERR_NAME
#define ET_MAD_ERR_MSG(id, name, msg) msg,
static const char *const err_msgs[] = {"ok", ET_MAD_ERRORS(ET_MAD_ERR_MSG)};
#undef ET_MAD_ERR_MSG

const char *
et_mad_err_name(int err)
{
	if (err < 0)
		err = -err;
	return err < ET_MAD_E_COUNT ? err_names[err] : "unknown";
}

const char *
et_mad_strerror(int err)
{
	if (err < 0)
		err = -err;
	return err < ET_MAD_E_COUNT ? err_msgs[err] : "unknown MAD error";
}

uint16_t
et_cm_pdata_size(uint16_t attr_id)
{
	switch (attr_id) {
	case ET_CM_REQ: return ET_CM_REQ_PDATA;
	case ET_CM_MRA: return ET_CM_MRA_PDATA;
	case ET_CM_REJ: return ET_CM_REJ_PDATA;
	case ET_CM_REP: return ET_CM_REP_PDATA;
	case ET_CM_RTU: return ET_CM_RTU_PDATA;
	case ET_CM_DREQ: return ET_CM_DREQ_PDATA;
	case ET_CM_DREP: return ET_CM_DREP_PDATA;
	case ET_CM_SIDR_REQ: return ET_CM_SIDR_REQ_PDATA;
	case ET_CM_SIDR_REP: return ET_CM_SIDR_REP_PDATA;
	}
	return 0;
}

const char *
et_cm_attr_name(uint16_t attr_id)
{
	static const char *const names[] = {"REQ",  "MRA",  "REJ",      "REP",     "RTU",
					    "DREQ", "DREP", "SIDR_REQ", "SIDR_REP"};
	static char other[16];

	if (attr_id >= ET_CM_REQ && attr_id <= ET_CM_SIDR_REP)
		return names[attr_id - ET_CM_REQ];
	snprintf(other, sizeof(other), "attr 0x%04x", attr_id);
	return other;
}

void
et_cm_msg_init(struct et_cm_msg *m, uint16_t attr, uint64_t tid)
{
	memset(m, 0, sizeof(*m));
	m->hdr.base_version = ET_MAD_BASE_VERSION;
	m->hdr.mgmt_class = ET_MAD_CLASS_CM;
	m->hdr.class_version = ET_CM_CLASS_VERSION;
	m->hdr.method = ET_MAD_METHOD_SEND;
	m->hdr.tid = tid;
	m->hdr.attr_id = attr;
}

/* ---- fields: each described once, for parse and build ---- */

/* A field of a layout: in the struct, at mem (mem_size bytes: a uint8_t,
 * bool, uint16_t, uint32_t or uint64_t); on the wire, width bits at
 * shift from the least significant bit of the big-endian word of
 * wire_size bytes at off.  width 0: wire_size bytes copied as they are
 * (a GID). */
struct mad_field {
	uint16_t mem;
	uint8_t mem_size;
	uint8_t off, wire_size, shift, width;
};

#define F(type, member, off, wire_size, shift, width)                                          \
	{offsetof(type, member), sizeof(((type *)0)->member), off, wire_size, shift, width}
#define N(a) (sizeof(a) / sizeof((a)[0]))

static uint64_t
wire_get(const uint8_t *p, uint8_t size)
{
	switch (size) {
	case 1: return p[0];
	case 2: return et_load16(p);
	case 4: return et_load32(p);
	default: return et_load64(p);
	}
}

static void
wire_put(uint8_t *p, uint8_t size, uint64_t v)
{
	switch (size) {
	case 1: p[0] = (uint8_t)v; break;
	case 2: et_store16(p, (uint16_t)v); break;
	case 4: et_store32(p, (uint32_t)v); break;
	default: et_store64(p, v); break;
	}
}

static uint64_t
mem_get(const void *s, const struct mad_field *f)
{
	const uint8_t *m = (const uint8_t *)s + f->mem;
	uint16_t v16;
	uint32_t v32;
	uint64_t v64;

	switch (f->mem_size) {
	case 1: return m[0];
	case 2: memcpy(&v16, m, 2); return v16;
	case 4: memcpy(&v32, m, 4); return v32;
	default: memcpy(&v64, m, 8); return v64;
	}
}

static void
mem_put(void *s, const struct mad_field *f, uint64_t v)
{
	uint8_t *m = (uint8_t *)s + f->mem;
	uint16_t v16 = (uint16_t)v;
	uint32_t v32 = (uint32_t)v;

	switch (f->mem_size) {
	case 1: m[0] = (uint8_t)v; break;
	case 2: memcpy(m, &v16, 2); break;
	case 4: memcpy(m, &v32, 4); break;
	default: memcpy(m, &v, 8); break;
	}
}

static uint64_t
mask_of(uint8_t width)
{
	return width >= 64 ? UINT64_MAX : (1ull << width) - 1;
}

static void
fields_parse(const struct mad_field *t, size_t n, const uint8_t *w, void *s)
{
	for (size_t i = 0; i < n; i++) {
		const struct mad_field *f = &t[i];

		if (f->width == 0)
			memcpy((uint8_t *)s + f->mem, w + f->off, f->wire_size);
		else
			mem_put(s, f, wire_get(w + f->off, f->wire_size) >> f->shift &
					      mask_of(f->width));
	}
}

/* false if a value does not fit its field's bits */
static bool
fields_build(const struct mad_field *t, size_t n, const void *s, uint8_t *w)
{
	for (size_t i = 0; i < n; i++) {
		const struct mad_field *f = &t[i];
		uint64_t v, m;

		if (f->width == 0) {
			memcpy(w + f->off, (const uint8_t *)s + f->mem, f->wire_size);
			continue;
		}
		v = mem_get(s, f);
		m = mask_of(f->width);
		if (v & ~m)
			return false;
		wire_put(w + f->off, f->wire_size,
			 (wire_get(w + f->off, f->wire_size) & ~(m << f->shift)) | v << f->shift);
	}
	return true;
}

/* IBTA vol. 1 tables 106-113: the common header, then each message's */
static const struct mad_field hdr_fields[] = {
	F(struct et_mad_hdr, base_version, 0, 1, 0, 8),
	F(struct et_mad_hdr, mgmt_class, 1, 1, 0, 8),
	F(struct et_mad_hdr, class_version, 2, 1, 0, 8),
	F(struct et_mad_hdr, method, 3, 1, 0, 8),
	F(struct et_mad_hdr, status, 4, 2, 0, 16),
	F(struct et_mad_hdr, class_specific, 6, 2, 0, 16),
	F(struct et_mad_hdr, tid, 8, 8, 0, 64),
	F(struct et_mad_hdr, attr_id, 16, 2, 0, 16),
	F(struct et_mad_hdr, attr_mod, 20, 4, 0, 32),
};

/* a REQ's path: 44 bytes, at 52 (primary) and 96 (alternate) */
static const struct mad_field path_fields[] = {
	F(struct et_cm_path, local_lid, 0, 2, 0, 16),
	F(struct et_cm_path, remote_lid, 2, 2, 0, 16),
	F(struct et_cm_path, local_gid, 4, 16, 0, 0),
	F(struct et_cm_path, remote_gid, 20, 16, 0, 0),
	F(struct et_cm_path, flow_label, 36, 4, 12, 20),
	F(struct et_cm_path, packet_rate, 36, 4, 0, 6),
	F(struct et_cm_path, traffic_class, 40, 1, 0, 8),
	F(struct et_cm_path, hop_limit, 41, 1, 0, 8),
	F(struct et_cm_path, sl, 42, 1, 4, 4),
	F(struct et_cm_path, subnet_local, 42, 1, 3, 1),
	F(struct et_cm_path, local_ack_timeout, 43, 1, 3, 5),
};

static const struct mad_field req_fields[] = {
	F(struct et_cm_req, local_comm_id, 0, 4, 0, 32),
	F(struct et_cm_req, service_id, 8, 8, 0, 64),
	F(struct et_cm_req, local_ca_guid, 16, 8, 0, 64),
	F(struct et_cm_req, local_qkey, 28, 4, 0, 32),
	F(struct et_cm_req, local_qpn, 32, 4, 8, 24),
	F(struct et_cm_req, responder_resources, 35, 1, 0, 8),
	F(struct et_cm_req, local_eecn, 36, 4, 8, 24),
	F(struct et_cm_req, initiator_depth, 39, 1, 0, 8),
	F(struct et_cm_req, remote_eecn, 40, 4, 8, 24),
	F(struct et_cm_req, remote_cm_response_timeout, 43, 1, 3, 5),
	F(struct et_cm_req, transport_type, 43, 1, 1, 2),
	F(struct et_cm_req, e2e_flow_control, 43, 1, 0, 1),
	F(struct et_cm_req, starting_psn, 44, 4, 8, 24),
	F(struct et_cm_req, local_cm_response_timeout, 47, 1, 3, 5),
	F(struct et_cm_req, retry_count, 47, 1, 0, 3),
	F(struct et_cm_req, pkey, 48, 2, 0, 16),
	F(struct et_cm_req, path_mtu, 50, 1, 4, 4),
	F(struct et_cm_req, rdc_exists, 50, 1, 3, 1),
	F(struct et_cm_req, rnr_retry_count, 50, 1, 0, 3),
	F(struct et_cm_req, max_cm_retries, 51, 1, 4, 4),
	F(struct et_cm_req, srq, 51, 1, 3, 1),
	F(struct et_cm_req, ext_transport, 51, 1, 0, 3),
};

static const struct mad_field mra_fields[] = {
	F(struct et_cm_mra, local_comm_id, 0, 4, 0, 32),
	F(struct et_cm_mra, remote_comm_id, 4, 4, 0, 32),
	F(struct et_cm_mra, msg_mraed, 8, 1, 6, 2),
	F(struct et_cm_mra, service_timeout, 9, 1, 3, 5),
};

static const struct mad_field rej_fields[] = {
	F(struct et_cm_rej, local_comm_id, 0, 4, 0, 32),
	F(struct et_cm_rej, remote_comm_id, 4, 4, 0, 32),
	F(struct et_cm_rej, msg_rejected, 8, 1, 6, 2),
	F(struct et_cm_rej, ari_len, 9, 1, 1, 7),
	F(struct et_cm_rej, reason, 10, 2, 0, 16),
};

static const struct mad_field rep_fields[] = {
	F(struct et_cm_rep, local_comm_id, 0, 4, 0, 32),
	F(struct et_cm_rep, remote_comm_id, 4, 4, 0, 32),
	F(struct et_cm_rep, local_qkey, 8, 4, 0, 32),
	F(struct et_cm_rep, local_qpn, 12, 4, 8, 24),
	F(struct et_cm_rep, local_eecn, 16, 4, 8, 24),
	F(struct et_cm_rep, starting_psn, 20, 4, 8, 24),
	F(struct et_cm_rep, responder_resources, 24, 1, 0, 8),
	F(struct et_cm_rep, initiator_depth, 25, 1, 0, 8),
	F(struct et_cm_rep, target_ack_delay, 26, 1, 3, 5),
	F(struct et_cm_rep, failover, 26, 1, 1, 2),
	F(struct et_cm_rep, e2e_flow_control, 26, 1, 0, 1),
	F(struct et_cm_rep, rnr_retry_count, 27, 1, 5, 3),
	F(struct et_cm_rep, srq, 27, 1, 4, 1),
	F(struct et_cm_rep, local_ca_guid, 28, 8, 0, 64),
};

/* RTU and DREP: the two ids; DREQ: and the QP it ends */
static const struct mad_field ids_fields[] = {
	F(struct et_cm_ids, local_comm_id, 0, 4, 0, 32),
	F(struct et_cm_ids, remote_comm_id, 4, 4, 0, 32),
	F(struct et_cm_ids, remote_qpn, 8, 4, 8, 24),
};

static const struct mad_field sidr_req_fields[] = {
	F(struct et_cm_sidr_req, request_id, 0, 4, 0, 32),
	F(struct et_cm_sidr_req, pkey, 4, 2, 0, 16),
	F(struct et_cm_sidr_req, service_id, 8, 8, 0, 64),
};

static const struct mad_field sidr_rep_fields[] = {
	F(struct et_cm_sidr_rep, request_id, 0, 4, 0, 32),
	F(struct et_cm_sidr_rep, status, 4, 1, 0, 8),
	F(struct et_cm_sidr_rep, info_len, 5, 1, 0, 8),
	F(struct et_cm_sidr_rep, qpn, 8, 4, 8, 24),
	F(struct et_cm_sidr_rep, service_id, 12, 8, 0, 64),
	F(struct et_cm_sidr_rep, qkey, 20, 4, 0, 32),
};

/* A message's fixed fields, and where its variable bytes (a REJ's ARI,
 * a SIDR_REP's info: length field, room) are; NULL for no CM message. */
struct mad_layout {
	const struct mad_field *fields;
	size_t n;
	uint8_t var_off, var_room;
};

static const struct mad_layout *
layout_of(uint16_t attr_id)
{
	static const struct mad_layout req = {req_fields, N(req_fields), 0, 0},
		mra = {mra_fields, N(mra_fields), 0, 0},
		rej = {rej_fields, N(rej_fields), 12, ET_CM_REJ_ARI_LEN},
		rep = {rep_fields, N(rep_fields), 0, 0},
		ids = {ids_fields, 2, 0, 0},
		dreq = {ids_fields, 3, 0, 0},
		sidr_req = {sidr_req_fields, N(sidr_req_fields), 0, 0},
		sidr_rep = {sidr_rep_fields, N(sidr_rep_fields), 24, ET_CM_SIDR_INFO_LEN};

	switch (attr_id) {
	case ET_CM_REQ: return &req;
	case ET_CM_MRA: return &mra;
	case ET_CM_REJ: return &rej;
	case ET_CM_REP: return &rep;
	case ET_CM_RTU:
	case ET_CM_DREP: return &ids;
	case ET_CM_DREQ: return &dreq;
	case ET_CM_SIDR_REQ: return &sidr_req;
	case ET_CM_SIDR_REP: return &sidr_rep;
	}
	return NULL;
}

/* Where the private data starts, in the CM's 232 bytes. */
static uint16_t
pdata_off(uint16_t attr_id)
{
	return (uint16_t)(ET_MAD_LEN - D - et_cm_pdata_size(attr_id));
}

/* A message's variable bytes and their length, in its struct (a REJ's
 * ARI, a SIDR_REP's info); NULL for the others. */
static uint8_t *
var_bytes(struct et_cm_msg *m, uint8_t **len)
{
	switch (m->hdr.attr_id) {
	case ET_CM_REJ:
		*len = &m->u.rej.ari_len;
		return m->u.rej.ari;
	case ET_CM_SIDR_REP:
		*len = &m->u.sidr_rep.info_len;
		return m->u.sidr_rep.info;
	}
	return NULL;
}

/* What a message's fields say that the bits cannot: a kind of message
 * named that is none. */
static bool
kinds_ok(const struct et_cm_msg *m)
{
	switch (m->hdr.attr_id) {
	case ET_CM_MRA: return m->u.mra.msg_mraed <= ET_CM_MSG_OTHER;
	case ET_CM_REJ: return m->u.rej.msg_rejected <= ET_CM_MSG_OTHER;
	}
	return true;
}

int
et_cm_parse(const uint8_t *buf, size_t len, struct et_cm_msg *m)
{
	const uint8_t *c = buf + D;
	struct et_mad_hdr *h = &m->hdr;
	const struct mad_layout *l;
	uint8_t *var, *var_len;

	memset(m, 0, sizeof(*m));
	if (len < ET_MAD_LEN)
		return -ET_MAD_E_TRUNC;
	if (len > ET_MAD_LEN)
		return -ET_MAD_E_OVERSIZE;
	fields_parse(hdr_fields, N(hdr_fields), buf, h);
	if (h->base_version != ET_MAD_BASE_VERSION)
		return -ET_MAD_E_BASE_VERSION;
	if (h->mgmt_class != ET_MAD_CLASS_CM)
		return -ET_MAD_E_CLASS;
	if (h->class_version != ET_CM_CLASS_VERSION)
		return -ET_MAD_E_CLASS_VERSION;
	if (h->method != ET_MAD_METHOD_SEND)
		return -ET_MAD_E_METHOD;
	if ((l = layout_of(h->attr_id)) == NULL)
		return -ET_MAD_E_ATTR;
	fields_parse(l->fields, l->n, c, &m->u);
	if (h->attr_id == ET_CM_REQ) {
		fields_parse(path_fields, N(path_fields), c + 52, &m->u.req.primary);
		fields_parse(path_fields, N(path_fields), c + 96, &m->u.req.alternate);
	}
	if (!kinds_ok(m))
		return -ET_MAD_E_FIELD;
	if ((var = var_bytes(m, &var_len)) != NULL) {
		if (*var_len > l->var_room)
			return -ET_MAD_E_FIELD;
		memcpy(var, c + l->var_off, *var_len);
	}
	m->pdata = c + pdata_off(h->attr_id);
	m->pdata_len = et_cm_pdata_size(h->attr_id);
	return 0;
}

int
et_cm_build(uint8_t out[ET_MAD_LEN], const struct et_cm_msg *m)
{
	const struct et_mad_hdr *h = &m->hdr;
	const struct mad_layout *l = layout_of(h->attr_id);
	uint16_t room = et_cm_pdata_size(h->attr_id);
	uint8_t *c = out + D, *var, *var_len;
	bool ok;

	if (l == NULL || room == 0)
		return -ET_MAD_E_ATTR;
	if (m->pdata_len > room)
		return -ET_MAD_E_FIELD;
	memset(out, 0, ET_MAD_LEN);
	ok = fields_build(hdr_fields, N(hdr_fields), h, out) &&
	     fields_build(l->fields, l->n, &m->u, c) && kinds_ok(m);
	if (ok && h->attr_id == ET_CM_REQ)
		ok = fields_build(path_fields, N(path_fields), &m->u.req.primary, c + 52) &&
		     fields_build(path_fields, N(path_fields), &m->u.req.alternate, c + 96);
	/* the struct is the caller's, const: its variable bytes read only */
	if (ok && (var = var_bytes((struct et_cm_msg *)m, &var_len)) != NULL) {
		ok = *var_len <= l->var_room;
		if (ok)
			memcpy(c + l->var_off, var, *var_len);
	}
	if (!ok)
		return -ET_MAD_E_FIELD;
	if (m->pdata_len)
		memcpy(c + pdata_off(h->attr_id), m->pdata, m->pdata_len);
	return ET_MAD_LEN;
}

/* ---- RDMA CM ---- */

void
et_cma_hdr_build(uint8_t out[ET_CMA_HDR_LEN], const struct et_cma_hdr *h)
{
	memset(out, 0, ET_CMA_HDR_LEN);
	out[0] = ET_CMA_VERSION;
	out[1] = 4 << 4;
	et_store16(out + 2, h->src_port);
	et_store32(out + 4 + 12, h->src_ip);
	et_store32(out + 20 + 12, h->dst_ip);
}

int
et_cma_hdr_parse(const uint8_t *p, size_t len, struct et_cma_hdr *h, const char **why)
{
	const char *w = NULL;

	memset(h, 0, sizeof(*h));
	if (len < ET_CMA_HDR_LEN)
		w = "shorter than rdma_cm's header";
	else if (p[0] != ET_CMA_VERSION)
		w = "rdma_cm header version is not 0";
	else if (p[1] >> 4 == 6)
		w = "rdma_cm over IPv6 is not spoken";
	else if (p[1] >> 4 != 4)
		w = "rdma_cm header IP version is not 4";
	if (w) {
		if (why)
			*why = w;
		return -1;
	}
	h->src_port = et_load16(p + 2);
	h->src_ip = et_load32(p + 4 + 12);
	h->dst_ip = et_load32(p + 20 + 12);
	return 0;
}

uint32_t
et_cm_mtu_bytes(uint8_t code)
{
	return code >= 1 && code <= 5 ? 128u << code : 0;
}

uint8_t
et_cm_mtu_code(uint32_t bytes)
{
	for (uint8_t c = 1; c <= 5; c++)
		if (et_cm_mtu_bytes(c) == bytes)
			return c;
	return 0;
}
