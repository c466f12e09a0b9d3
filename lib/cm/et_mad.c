/* SPDX-License-Identifier: BSD-3-Clause
 * CM MADs: the fixed layouts of IBTA vol. 1 tables 106-113, as offsets in
 * the 232 bytes after the common header; bit fields are numbered from the
 * most significant bit of their byte, as the spec draws them.
 */
#include "cm/et_mad.h"

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

/* A 24-bit field in the high bytes of a word, the low byte another's. */
static uint32_t
hi24(const uint8_t *p)
{
	return et_load32(p) >> 8;
}

static void
put_hi24(uint8_t *p, uint32_t v24, uint8_t low)
{
	et_store32(p, v24 << 8 | low);
}

/* ---- the path of a REQ: 44 bytes at off ---- */

static void
path_parse(const uint8_t *p, struct et_cm_path *x)
{
	uint32_t w = et_load32(p + 36);

	x->local_lid = et_load16(p);
	x->remote_lid = et_load16(p + 2);
	memcpy(x->local_gid, p + 4, 16);
	memcpy(x->remote_gid, p + 20, 16);
	x->flow_label = w >> 12;
	x->packet_rate = w & 0x3f;
	x->traffic_class = p[40];
	x->hop_limit = p[41];
	x->sl = p[42] >> 4;
	x->subnet_local = (p[42] >> 3) & 1;
	x->local_ack_timeout = p[43] >> 3;
}

static bool
path_build(uint8_t *p, const struct et_cm_path *x)
{
	if (x->flow_label >> 20 || x->packet_rate >> 6 || x->sl >> 4 || x->local_ack_timeout >> 5)
		return false;
	et_store16(p, x->local_lid);
	et_store16(p + 2, x->remote_lid);
	memcpy(p + 4, x->local_gid, 16);
	memcpy(p + 20, x->remote_gid, 16);
	et_store32(p + 36, x->flow_label << 12 | x->packet_rate);
	p[40] = x->traffic_class;
	p[41] = x->hop_limit;
	p[42] = (uint8_t)(x->sl << 4 | (uint8_t)x->subnet_local << 3);
	p[43] = (uint8_t)(x->local_ack_timeout << 3);
	return true;
}

/* ---- messages: parse ---- */

static void
req_parse(const uint8_t *c, struct et_cm_req *r)
{
	r->local_comm_id = et_load32(c);
	r->service_id = et_load64(c + 8);
	r->local_ca_guid = et_load64(c + 16);
	r->local_qkey = et_load32(c + 28);
	r->local_qpn = hi24(c + 32);
	r->responder_resources = c[35];
	r->local_eecn = hi24(c + 36);
	r->initiator_depth = c[39];
	r->remote_eecn = hi24(c + 40);
	r->remote_cm_response_timeout = c[43] >> 3;
	r->transport_type = (c[43] >> 1) & 3;
	r->e2e_flow_control = c[43] & 1;
	r->starting_psn = hi24(c + 44);
	r->local_cm_response_timeout = c[47] >> 3;
	r->retry_count = c[47] & 7;
	r->pkey = et_load16(c + 48);
	r->path_mtu = c[50] >> 4;
	r->rdc_exists = (c[50] >> 3) & 1;
	r->rnr_retry_count = c[50] & 7;
	r->max_cm_retries = c[51] >> 4;
	r->srq = (c[51] >> 3) & 1;
	r->ext_transport = c[51] & 7;
	path_parse(c + 52, &r->primary);
	path_parse(c + 96, &r->alternate);
}

static void
rep_parse(const uint8_t *c, struct et_cm_rep *r)
{
	r->local_comm_id = et_load32(c);
	r->remote_comm_id = et_load32(c + 4);
	r->local_qkey = et_load32(c + 8);
	r->local_qpn = hi24(c + 12);
	r->local_eecn = hi24(c + 16);
	r->starting_psn = hi24(c + 20);
	r->responder_resources = c[24];
	r->initiator_depth = c[25];
	r->target_ack_delay = c[26] >> 3;
	r->failover = (c[26] >> 1) & 3;
	r->e2e_flow_control = c[26] & 1;
	r->rnr_retry_count = c[27] >> 5;
	r->srq = (c[27] >> 4) & 1;
	r->local_ca_guid = et_load64(c + 28);
}

static void
sidr_rep_parse(const uint8_t *c, struct et_cm_sidr_rep *r)
{
	r->request_id = et_load32(c);
	r->status = c[4];
	r->info_len = c[5];
	r->qpn = hi24(c + 8);
	r->service_id = et_load64(c + 12);
	r->qkey = et_load32(c + 20);
	memcpy(r->info, c + 24, ET_CM_SIDR_INFO_LEN);
}

/* Where the private data starts, in the CM's 232 bytes. */
static uint16_t
pdata_off(uint16_t attr_id)
{
	return (uint16_t)(ET_MAD_LEN - D - et_cm_pdata_size(attr_id));
}

int
et_cm_parse(const uint8_t *buf, size_t len, struct et_cm_msg *m)
{
	const uint8_t *c = buf + D;
	struct et_mad_hdr *h = &m->hdr;

	memset(m, 0, sizeof(*m));
	if (len < ET_MAD_LEN)
		return -ET_MAD_E_TRUNC;
	if (len > ET_MAD_LEN)
		return -ET_MAD_E_OVERSIZE;
	h->base_version = buf[0];
	h->mgmt_class = buf[1];
	h->class_version = buf[2];
	h->method = buf[3];
	h->status = et_load16(buf + 4);
	h->class_specific = et_load16(buf + 6);
	h->tid = et_load64(buf + 8);
	h->attr_id = et_load16(buf + 16);
	h->attr_mod = et_load32(buf + 20);
	if (h->base_version != ET_MAD_BASE_VERSION)
		return -ET_MAD_E_BASE_VERSION;
	if (h->mgmt_class != ET_MAD_CLASS_CM)
		return -ET_MAD_E_CLASS;
	if (h->class_version != ET_CM_CLASS_VERSION)
		return -ET_MAD_E_CLASS_VERSION;
	if (h->method != ET_MAD_METHOD_SEND)
		return -ET_MAD_E_METHOD;
	switch (h->attr_id) {
	case ET_CM_REQ:
		req_parse(c, &m->u.req);
		break;
	case ET_CM_MRA:
		m->u.mra.local_comm_id = et_load32(c);
		m->u.mra.remote_comm_id = et_load32(c + 4);
		m->u.mra.msg_mraed = c[8] >> 6;
		m->u.mra.service_timeout = c[9] >> 3;
		if (m->u.mra.msg_mraed > ET_CM_MSG_OTHER)
			return -ET_MAD_E_FIELD;
		break;
	case ET_CM_REJ:
		m->u.rej.local_comm_id = et_load32(c);
		m->u.rej.remote_comm_id = et_load32(c + 4);
		m->u.rej.msg_rejected = c[8] >> 6;
		m->u.rej.ari_len = c[9] >> 1;
		m->u.rej.reason = et_load16(c + 10);
		if (m->u.rej.msg_rejected > ET_CM_MSG_OTHER || m->u.rej.ari_len > ET_CM_REJ_ARI_LEN)
			return -ET_MAD_E_FIELD;
		memcpy(m->u.rej.ari, c + 12, m->u.rej.ari_len);
		break;
	case ET_CM_REP:
		rep_parse(c, &m->u.rep);
		break;
	case ET_CM_RTU:
	case ET_CM_DREQ:
	case ET_CM_DREP:
		m->u.ids.local_comm_id = et_load32(c);
		m->u.ids.remote_comm_id = et_load32(c + 4);
		if (h->attr_id == ET_CM_DREQ)
			m->u.ids.remote_qpn = hi24(c + 8);
		break;
	case ET_CM_SIDR_REQ:
		m->u.sidr_req.request_id = et_load32(c);
		m->u.sidr_req.pkey = et_load16(c + 4);
		m->u.sidr_req.service_id = et_load64(c + 8);
		break;
	case ET_CM_SIDR_REP:
		sidr_rep_parse(c, &m->u.sidr_rep);
		if (m->u.sidr_rep.info_len > ET_CM_SIDR_INFO_LEN)
			return -ET_MAD_E_FIELD;
		break;
	default:
		return -ET_MAD_E_ATTR;
	}
	m->pdata = c + pdata_off(h->attr_id);
	m->pdata_len = et_cm_pdata_size(h->attr_id);
	return 0;
}

/* ---- messages: build ---- */

static bool
req_build(uint8_t *c, const struct et_cm_req *r)
{
	if (r->local_qpn >> 24 || r->local_eecn >> 24 || r->remote_eecn >> 24 ||
	    r->starting_psn >> 24 || r->remote_cm_response_timeout >> 5 ||
	    r->transport_type >> 2 || r->local_cm_response_timeout >> 5 || r->retry_count >> 3 ||
	    r->path_mtu >> 4 || r->rnr_retry_count >> 3 || r->max_cm_retries >> 4 ||
	    r->ext_transport >> 3)
		return false;
	et_store32(c, r->local_comm_id);
	et_store64(c + 8, r->service_id);
	et_store64(c + 16, r->local_ca_guid);
	et_store32(c + 28, r->local_qkey);
	put_hi24(c + 32, r->local_qpn, r->responder_resources);
	put_hi24(c + 36, r->local_eecn, r->initiator_depth);
	put_hi24(c + 40, r->remote_eecn,
		 (uint8_t)(r->remote_cm_response_timeout << 3 | r->transport_type << 1 |
			   (uint8_t)r->e2e_flow_control));
	put_hi24(c + 44, r->starting_psn,
		 (uint8_t)(r->local_cm_response_timeout << 3 | r->retry_count));
	et_store16(c + 48, r->pkey);
	c[50] = (uint8_t)(r->path_mtu << 4 | (uint8_t)r->rdc_exists << 3 | r->rnr_retry_count);
	c[51] = (uint8_t)(r->max_cm_retries << 4 | (uint8_t)r->srq << 3 | r->ext_transport);
	return path_build(c + 52, &r->primary) && path_build(c + 96, &r->alternate);
}

static bool
rep_build(uint8_t *c, const struct et_cm_rep *r)
{
	if (r->local_qpn >> 24 || r->local_eecn >> 24 || r->starting_psn >> 24 ||
	    r->target_ack_delay >> 5 || r->failover >> 2 || r->rnr_retry_count >> 3)
		return false;
	et_store32(c, r->local_comm_id);
	et_store32(c + 4, r->remote_comm_id);
	et_store32(c + 8, r->local_qkey);
	put_hi24(c + 12, r->local_qpn, 0);
	put_hi24(c + 16, r->local_eecn, 0);
	put_hi24(c + 20, r->starting_psn, 0);
	c[24] = r->responder_resources;
	c[25] = r->initiator_depth;
	c[26] = (uint8_t)(r->target_ack_delay << 3 | r->failover << 1 | (uint8_t)r->e2e_flow_control);
	c[27] = (uint8_t)(r->rnr_retry_count << 5 | (uint8_t)r->srq << 4);
	et_store64(c + 28, r->local_ca_guid);
	return true;
}

int
et_cm_build(uint8_t out[ET_MAD_LEN], const struct et_cm_msg *m)
{
	const struct et_mad_hdr *h = &m->hdr;
	uint8_t *c = out + D;
	uint16_t room = et_cm_pdata_size(h->attr_id);
	bool ok = true;

	if (room == 0)
		return -ET_MAD_E_ATTR;
	if (m->pdata_len > room)
		return -ET_MAD_E_FIELD;
	memset(out, 0, ET_MAD_LEN);
	out[0] = h->base_version;
	out[1] = h->mgmt_class;
	out[2] = h->class_version;
	out[3] = h->method;
	et_store16(out + 4, h->status);
	et_store16(out + 6, h->class_specific);
	et_store64(out + 8, h->tid);
	et_store16(out + 16, h->attr_id);
	et_store32(out + 20, h->attr_mod);
	switch (h->attr_id) {
	case ET_CM_REQ:
		ok = req_build(c, &m->u.req);
		break;
	case ET_CM_MRA:
		ok = m->u.mra.msg_mraed <= ET_CM_MSG_OTHER && !(m->u.mra.service_timeout >> 5);
		et_store32(c, m->u.mra.local_comm_id);
		et_store32(c + 4, m->u.mra.remote_comm_id);
		c[8] = (uint8_t)(m->u.mra.msg_mraed << 6);
		c[9] = (uint8_t)(m->u.mra.service_timeout << 3);
		break;
	case ET_CM_REJ:
		ok = m->u.rej.msg_rejected <= ET_CM_MSG_OTHER && m->u.rej.ari_len <= ET_CM_REJ_ARI_LEN;
		et_store32(c, m->u.rej.local_comm_id);
		et_store32(c + 4, m->u.rej.remote_comm_id);
		c[8] = (uint8_t)(m->u.rej.msg_rejected << 6);
		c[9] = (uint8_t)(m->u.rej.ari_len << 1);
		et_store16(c + 10, m->u.rej.reason);
		if (ok)
			memcpy(c + 12, m->u.rej.ari, m->u.rej.ari_len);
		break;
	case ET_CM_REP:
		ok = rep_build(c, &m->u.rep);
		break;
	case ET_CM_SIDR_REQ:
		et_store32(c, m->u.sidr_req.request_id);
		et_store16(c + 4, m->u.sidr_req.pkey);
		et_store64(c + 8, m->u.sidr_req.service_id);
		break;
	case ET_CM_SIDR_REP: {
		const struct et_cm_sidr_rep *r = &m->u.sidr_rep;

		ok = !(r->qpn >> 24) && r->info_len <= ET_CM_SIDR_INFO_LEN;
		et_store32(c, r->request_id);
		c[4] = r->status;
		c[5] = r->info_len;
		put_hi24(c + 8, r->qpn, 0);
		et_store64(c + 12, r->service_id);
		et_store32(c + 20, r->qkey);
		if (ok)
			memcpy(c + 24, r->info, r->info_len);
		break;
	}
	default: /* RTU, DREQ, DREP */
		et_store32(c, m->u.ids.local_comm_id);
		et_store32(c + 4, m->u.ids.remote_comm_id);
		if (h->attr_id == ET_CM_DREQ) {
			ok = !(m->u.ids.remote_qpn >> 24);
			put_hi24(c + 8, m->u.ids.remote_qpn, 0);
		}
		break;
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
