/* SPDX-License-Identifier: BSD-3-Clause
 * The provider through libfabric's API, as a consumer sees it: found in
 * the build (FI_PROVIDER_PATH), two endpoints of one process on the loop
 * device (their frames cross a ring of the NIC model), and what fabtests'
 * quick set does not reach: tag matching under ignore bits, in order;
 * directed receives; the unexpected queue; FI_PEEK, FI_CLAIM, FI_DISCARD;
 * error entries with their olen (FI_ETRUNC, eager and rendezvous;
 * FI_ECANCELED; FI_ENOMSG; a peer gone, FI_EHOSTUNREACH); RMA write,
 * writedata and read; an address that names no endpoint.
 *
 * test-fi PROVIDER_DIR WORK_DIR           those
 * test-fi PROVIDER_DIR WORK_DIR resume    connections that resume on new
 *                                         QPs across a flapping port
 */
#include "et_test.h"

#include <arpa/inet.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#define BIG (1u << 20) /* a rendezvous */

struct side {
	struct fid_ep *ep;
	struct fid_cq *cq;
	fi_addr_t peer;      /* the other side in this one's AV */
	char name[64];
	size_t namelen;
};

static struct fi_info *info;
static struct fid_fabric *fabric;
static struct fid_domain *domain;
static struct fid_av *av;
static struct side a, b;
static uint8_t *abuf, *bbuf;

static int
open_side(struct side *s)
{
	struct fi_cq_attr cq = {.format = FI_CQ_FORMAT_TAGGED, .size = 256};

	if (fi_endpoint(domain, info, &s->ep, NULL) || fi_cq_open(domain, &cq, &s->cq, NULL) ||
	    fi_ep_bind(s->ep, &av->fid, 0) ||
	    fi_ep_bind(s->ep, &s->cq->fid, FI_TRANSMIT | FI_RECV) || fi_enable(s->ep))
		return -1;
	s->namelen = sizeof(s->name);
	return fi_getname(&s->ep->fid, s->name, &s->namelen);
}

static int
setup(void **state)
{
	struct fi_info *hints = fi_allocinfo();
	struct fi_av_attr aa = {.type = FI_AV_TABLE};

	hints->caps = FI_TAGGED | FI_MSG | FI_RMA | FI_DIRECTED_RECV;
	hints->ep_attr->type = FI_EP_RDM;
	hints->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	hints->fabric_attr->prov_name = strdup("ethereal");
	if (fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &info))
		return -1;
	fi_freeinfo(hints);
	if (fi_fabric(info->fabric_attr, &fabric, NULL) || fi_domain(fabric, info, &domain, NULL) ||
	    fi_av_open(domain, &aa, &av, NULL) || open_side(&a) || open_side(&b))
		return -1;
	/* both in one AV: a at 0, b at 1 */
	if (fi_av_insert(av, a.name, 1, &b.peer, 0, NULL) != 1 ||
	    fi_av_insert(av, b.name, 1, &a.peer, 0, NULL) != 1)
		return -1;
	abuf = calloc(1, 4 * BIG);
	bbuf = calloc(1, 4 * BIG);
	return abuf && bbuf ? 0 : -1;
}

static int
teardown(void **state)
{
	(void)state;
	if (a.ep)
		fi_close(&a.ep->fid);
	if (b.ep)
		fi_close(&b.ep->fid);
	fi_close(&a.cq->fid);
	fi_close(&b.cq->fid);
	fi_close(&av->fid);
	fi_close(&domain->fid);
	fi_close(&fabric->fid);
	fi_freeinfo(info);
	free(abuf);
	free(bbuf);
	return 0;
}

static double
now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* The next completion of s (progressing the other side too): 1, or
 * -FI_EAVAIL with *err filled; fails the test after 10 s. */
static int
next(struct side *s, struct fi_cq_tagged_entry *e, struct fi_cq_err_entry *err)
{
	struct side *o = s == &a ? &b : &a;
	struct fi_cq_tagged_entry junk;
	double until = now_s() + 10;

	for (;;) {
		ssize_t r = fi_cq_read(s->cq, e, 1);

		if (r == 1)
			return 1;
		if (r == -FI_EAVAIL) {
			memset(err, 0, sizeof(*err));
			assert_int_equal(fi_cq_readerr(s->cq, err, 0), 1);
			return -FI_EAVAIL;
		}
		assert_int_equal(r, -FI_EAGAIN);
		/* the other side's reads progress the one NIC too: any
		 * completion of its is for the caller to expect, so none here */
		(void)o;
		(void)junk;
		if (now_s() > until)
			fail_msg("no completion in 10 s");
	}
}

static void
expect_ok(struct side *s, void *ctx, uint64_t flags, size_t len, uint64_t tag)
{
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;

	assert_int_equal(next(s, &e, &err), 1);
	assert_ptr_equal(e.op_context, ctx);
	assert_true((e.flags & flags) == flags);
	if (flags & FI_RECV) {
		assert_int_equal(e.len, len);
		assert_int_equal(e.tag, tag);
	}
}

static void
expect_err(struct side *s, void *ctx, int errno_fi, size_t olen)
{
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;

	assert_int_equal(next(s, &e, &err), -FI_EAVAIL);
	assert_ptr_equal(err.op_context, ctx);
	assert_int_equal(err.err, errno_fi);
	assert_int_equal(err.olen, olen);
}

static void
fill(uint8_t *p, size_t n, uint8_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 7 + seed);
}

/* Tags match under the ignore bits, messages in the order they were sent;
 * a message that comes first waits in the unexpected queue. */
static void
test_tags_in_order(void **state)
{
	int c[4];

	fill(abuf, 64, 1);
	fill(abuf + 64, 64, 2);
	/* two sends before any receive: unexpected, then matched in order */
	assert_int_equal(fi_tsend(a.ep, abuf, 64, NULL, a.peer, 0x1234, &c[0]), 0);
	assert_int_equal(fi_tsend(a.ep, abuf + 64, 64, NULL, a.peer, 0x1299, &c[1]), 0);
	expect_ok(&a, &c[0], FI_SEND | FI_TAGGED, 0, 0);
	expect_ok(&a, &c[1], FI_SEND | FI_TAGGED, 0, 0);
	/* 0x12xx matches both: the first sent comes first */
	assert_int_equal(fi_trecv(b.ep, bbuf, 64, NULL, FI_ADDR_UNSPEC, 0x1200, 0xff, &c[2]), 0);
	expect_ok(&b, &c[2], FI_RECV | FI_TAGGED, 64, 0x1234);
	assert_memory_equal(bbuf, abuf, 64);
	/* a tag outside the ignore bits does not match; the right one does */
	assert_int_equal(fi_trecv(b.ep, bbuf, 64, NULL, FI_ADDR_UNSPEC, 0x5599, 0, &c[3]), 0);
	assert_int_equal(fi_trecv(b.ep, bbuf + 64, 64, NULL, FI_ADDR_UNSPEC, 0x1299, 0, &c[0]), 0);
	expect_ok(&b, &c[0], FI_RECV | FI_TAGGED, 64, 0x1299);
	assert_memory_equal(bbuf + 64, abuf + 64, 64);
	/* the one left is cancelled */
	assert_int_equal(fi_cancel(&b.ep->fid, &c[3]), 0);
	expect_err(&b, &c[3], FI_ECANCELED, 0);
	assert_int_equal(fi_cancel(&b.ep->fid, &c[3]), -FI_ENOENT);
}

/* A receive for one address takes that peer's messages only. */
static void
test_directed(void **state)
{
	int c[3];

	/* b's own endpoint is b.peer in a's view; in b's view a is a.peer's
	 * other side: b receives from a (AV index 0) only */
	assert_int_equal(fi_trecv(b.ep, bbuf, 16, NULL, b.peer, 7, 0, &c[0]), 0);
	assert_int_equal(fi_tsend(a.ep, abuf, 16, NULL, a.peer, 7, &c[1]), 0);
	expect_ok(&a, &c[1], FI_SEND, 0, 0);
	expect_ok(&b, &c[0], FI_RECV | FI_TAGGED, 16, 7);
	/* directed at b itself (index 1): a's message is not for it */
	assert_int_equal(fi_trecv(b.ep, bbuf, 16, NULL, a.peer, 8, 0, &c[0]), 0);
	assert_int_equal(fi_tsend(a.ep, abuf, 16, NULL, a.peer, 8, &c[1]), 0);
	expect_ok(&a, &c[1], FI_SEND, 0, 0);
	assert_int_equal(fi_trecv(b.ep, bbuf + 16, 16, NULL, b.peer, 8, 0, &c[2]), 0);
	expect_ok(&b, &c[2], FI_RECV | FI_TAGGED, 16, 8);
	assert_int_equal(fi_cancel(&b.ep->fid, &c[0]), 0);
	expect_err(&b, &c[0], FI_ECANCELED, 0);
}

/* A receive too small: the bytes it holds, FI_ETRUNC and the overflow. */
static void
test_truncation(void **state)
{
	int c[4];

	fill(abuf, BIG, 3);
	assert_int_equal(fi_trecv(b.ep, bbuf, 100, NULL, FI_ADDR_UNSPEC, 1, 0, &c[0]), 0);
	assert_int_equal(fi_tsend(a.ep, abuf, 300, NULL, a.peer, 1, &c[1]), 0);
	expect_ok(&a, &c[1], FI_SEND, 0, 0);
	expect_err(&b, &c[0], FI_ETRUNC, 200);
	assert_memory_equal(bbuf, abuf, 100);
	/* the same by rendezvous: the receiver takes what fits */
	memset(bbuf, 0, BIG);
	assert_int_equal(fi_trecv(b.ep, bbuf, BIG / 2, NULL, FI_ADDR_UNSPEC, 2, 0, &c[2]), 0);
	assert_int_equal(fi_tsend(a.ep, abuf, BIG, NULL, a.peer, 2, &c[3]), 0);
	expect_err(&b, &c[2], FI_ETRUNC, BIG / 2);
	expect_ok(&a, &c[3], FI_SEND, 0, 0);
	assert_memory_equal(bbuf, abuf, BIG / 2);
}

/* A rendezvous whole, sent before its receive, with CQ data. */
static void
test_rendezvous(void **state)
{
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;
	int c[2];

	fill(abuf, BIG, 4);
	memset(bbuf, 0, BIG);
	assert_int_equal(fi_tsenddata(a.ep, abuf, BIG, NULL, 0xabcd, a.peer, 3, &c[0]), 0);
	assert_int_equal(fi_trecv(b.ep, bbuf, BIG, NULL, FI_ADDR_UNSPEC, 3, 0, &c[1]), 0);
	assert_int_equal(next(&b, &e, &err), 1);
	assert_ptr_equal(e.op_context, &c[1]);
	assert_true(e.flags & FI_REMOTE_CQ_DATA);
	assert_int_equal(e.data, 0xabcd);
	assert_int_equal(e.len, BIG);
	expect_ok(&a, &c[0], FI_SEND, 0, 0);
	assert_memory_equal(bbuf, abuf, BIG);
}

/* FI_PEEK finds an unexpected message without taking it, FI_CLAIM takes
 * the one it found, FI_DISCARD drops one; a peek that finds none: ENOMSG. */
static void
test_peek_claim(void **state)
{
	struct fi_context ctx[3];
	struct fi_msg_tagged m = {0};
	struct iovec iov = {.iov_base = bbuf, .iov_len = 64};
	int c[2];

	m.tag = 0x77;
	m.addr = FI_ADDR_UNSPEC;
	m.context = &ctx[0];
	assert_int_equal(fi_trecvmsg(b.ep, &m, FI_PEEK), 0);
	expect_err(&b, &ctx[0], FI_ENOMSG, 0);
	fill(abuf, 64, 5);
	assert_int_equal(fi_tsend(a.ep, abuf, 40, NULL, a.peer, 0x77, &c[0]), 0);
	assert_int_equal(fi_tsend(a.ep, abuf, 50, NULL, a.peer, 0x78, &c[1]), 0);
	expect_ok(&a, &c[0], FI_SEND, 0, 0);
	expect_ok(&a, &c[1], FI_SEND, 0, 0);
	m.context = &ctx[1];
	assert_int_equal(fi_trecvmsg(b.ep, &m, FI_PEEK | FI_CLAIM), 0);
	expect_ok(&b, &ctx[1], FI_RECV | FI_TAGGED, 40, 0x77);
	m.msg_iov = &iov;
	m.iov_count = 1;
	assert_int_equal(fi_trecvmsg(b.ep, &m, FI_CLAIM), 0);
	expect_ok(&b, &ctx[1], FI_RECV | FI_TAGGED, 40, 0x77);
	assert_memory_equal(bbuf, abuf, 40);
	/* 0x78 discarded: a later receive for it finds nothing */
	m.tag = 0x78;
	m.context = &ctx[2];
	m.msg_iov = NULL;
	m.iov_count = 0;
	assert_int_equal(fi_trecvmsg(b.ep, &m, FI_PEEK | FI_DISCARD), 0);
	expect_ok(&b, &ctx[2], FI_RECV | FI_TAGGED, 50, 0x78);
	assert_int_equal(fi_trecvmsg(b.ep, &m, FI_PEEK), 0);
	expect_err(&b, &ctx[2], FI_ENOMSG, 0);
}

/* RMA into a registered region: write, writedata (the target's CQ entry
 * after the bytes), read back. */
static void
test_rma(void **state)
{
	struct fid_mr *mr;
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;
	int c[3];

	assert_int_equal(fi_mr_reg(domain, bbuf, BIG, FI_REMOTE_READ | FI_REMOTE_WRITE, 0, 0, 0,
				   &mr, NULL), 0);
	fill(abuf, BIG, 6);
	memset(bbuf, 0, BIG);
	assert_int_equal(fi_write(a.ep, abuf, BIG, NULL, a.peer, (uint64_t)(uintptr_t)bbuf,
				  fi_mr_key(mr), &c[0]), 0);
	expect_ok(&a, &c[0], FI_RMA | FI_WRITE, 0, 0);
	assert_memory_equal(bbuf, abuf, BIG);
	assert_int_equal(fi_writedata(a.ep, abuf, 4096, NULL, 0x5151, a.peer,
				      (uint64_t)(uintptr_t)bbuf + 8192, fi_mr_key(mr), &c[1]), 0);
	expect_ok(&a, &c[1], FI_RMA | FI_WRITE, 0, 0);
	assert_int_equal(next(&b, &e, &err), 1);
	assert_true(e.flags & FI_REMOTE_CQ_DATA);
	assert_int_equal(e.data, 0x5151);
	memset(abuf, 0, BIG);
	assert_int_equal(fi_read(a.ep, abuf, BIG, NULL, a.peer, (uint64_t)(uintptr_t)bbuf,
				 fi_mr_key(mr), &c[2]), 0);
	expect_ok(&a, &c[2], FI_RMA | FI_READ, 0, 0);
	assert_memory_equal(abuf, bbuf, BIG);
	fi_close(&mr->fid);
}

/* The process's "reconnects N" (FI_ETHEREAL_STATS), said when its last
 * endpoint closes: both are closed here, stderr caught meanwhile. */
static unsigned long
close_and_count_reconnects(const char *work)
{
	char path[512], line[1024];
	unsigned long n = 0;
	int saved = dup(2);
	FILE *f;

	snprintf(path, sizeof(path), "%s/fi-resume-stats.txt", work);
	assert_non_null(freopen(path, "w", stderr));
	assert_int_equal(fi_close(&a.ep->fid), 0);
	assert_int_equal(fi_close(&b.ep->fid), 0);
	a.ep = b.ep = NULL;
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	assert_non_null(f = fopen(path, "r"));
	while (fgets(line, sizeof(line), f)) {
		const char *r = strstr(line, "reconnects ");

		fputs(line, stdout);
		if (r)
			n = strtoul(r + strlen("reconnects "), NULL, 10);
	}
	fclose(f);
	return n;
}

static const char *work_dir;

/* Across a port that flaps (down for about 60 ms in every 300; a QP's
 * retries give up after about 10 ms: the conf this mode runs with), QPs
 * run out of retries and their connections resume on new ones: every
 * message arrives once, in order, with its bytes, in windows of 16 with
 * injected, eager and rendezvous ones, and RMA writes with CQ data. */
static void
test_resume(void **state)
{
	enum { WIN = 16, EAGER = 2048, RDV = 192 * 1024, SLOT = RDV };
	struct fid_mr *mr;
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;
	struct fi_context sc[WIN], rc[WIN + 1], wc;
	double until = now_s() + 4;
	uint64_t tag = 0, rounds = 0;

	(void)state;
	uint8_t *target = bbuf + 3 * BIG + BIG / 2; /* past the window's slots */

	assert_int_equal(fi_mr_reg(domain, target, 65536, FI_REMOTE_WRITE, 0, 0, 0, &mr, NULL), 0);
	while (now_s() < until) {
		uint32_t sends = 0;

		for (int i = 0; i < WIN; i++) {
			uint64_t t = tag + (uint64_t)i;
			size_t len = i % 4 == 0 ? 48 : i % 4 == 3 ? RDV : EAGER;

			fill(abuf + (size_t)i * SLOT, len, (uint8_t)t);
			/* any tag: the k-th receive takes the k-th message to arrive */
			assert_int_equal(fi_trecv(b.ep, bbuf + (size_t)i * SLOT, SLOT, NULL,
						  FI_ADDR_UNSPEC, 0, ~0ull, &rc[i]), 0);
			if (len == 48) {
				while (fi_tinject(a.ep, abuf + (size_t)i * SLOT, len, a.peer, t) ==
				       -FI_EAGAIN)
					fi_cq_read(a.cq, &e, 0);
			} else {
				assert_int_equal(fi_tsend(a.ep, abuf + (size_t)i * SLOT, len, NULL,
							  a.peer, t, &sc[sends++]), 0);
			}
		}
		/* and an RMA write whose CQ data comes after its bytes */
		fill(abuf + (size_t)WIN * SLOT, 65536, (uint8_t)rounds);
		assert_int_equal(fi_writedata(a.ep, abuf + (size_t)WIN * SLOT, 65536, NULL,
					      rounds, a.peer, (uint64_t)(uintptr_t)target,
					      fi_mr_key(mr), &wc), 0);
		/* b: receive k took message k (matched in the order sent), whole,
		 * once (a rendezvous completes after the eager ones behind it);
		 * the write's data among them */
		bool got[WIN] = {false};

		for (int n = 0, rma = 0; n < WIN || !rma;) {
			struct fi_context *x;
			size_t k, len;

			assert_int_equal(next(&b, &e, &err), 1);
			if (e.flags & FI_REMOTE_CQ_DATA) {
				assert_false(rma);
				assert_int_equal(e.data, rounds);
				assert_memory_equal(target, abuf + (size_t)WIN * SLOT, 65536);
				rma = 1;
				continue;
			}
			x = e.op_context;
			assert_true(x >= rc && x < rc + WIN);
			k = (size_t)(x - rc);
			len = k % 4 == 0 ? 48 : k % 4 == 3 ? RDV : EAGER;
			assert_false(got[k]);
			got[k] = true;
			assert_int_equal(e.tag, tag + k);
			assert_int_equal(e.len, len);
			assert_memory_equal(bbuf + k * SLOT, abuf + k * SLOT, len);
			n++;
		}
		/* a: every send and the write, once (a rendezvous ends after
		 * the eager ones behind it) */
		bool seen[WIN + 1] = {false};

		for (uint32_t i = 0; i <= sends; i++) {
			struct fi_context *x;

			assert_int_equal(next(&a, &e, &err), 1);
			x = e.op_context;
			assert_true(x == &wc || (x >= sc && x < sc + sends));
			assert_false(seen[x == &wc ? WIN : x - sc]);
			seen[x == &wc ? WIN : x - sc] = true;
		}
		tag += WIN;
		rounds++;
	}
	fi_close(&mr->fid);
	/* nothing more came: no message twice */
	assert_int_equal(fi_cq_read(b.cq, &e, 1), -FI_EAGAIN);
	print_message("%llu windows of %d messages\n", (unsigned long long)rounds, WIN);
	assert_true(close_and_count_reconnects(work_dir) > 0);
}

/* An address of the AV that names no endpoint: the connection is never
 * answered and the send ends in an error entry, nothing else disturbed. */
static void
test_no_such_peer(void **state)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(61111)};
	fi_addr_t nobody;
	int c[3];

	memcpy(&sa.sin_addr, &((struct sockaddr_in *)a.name)->sin_addr, 4);
	assert_int_equal(fi_av_insert(av, &sa, 1, &nobody, 0, NULL), 1);
	assert_int_equal(fi_tsend(a.ep, abuf, 16, NULL, nobody, 9, &c[0]), 0);
	expect_err(&a, &c[0], FI_ECONNREFUSED, 0);
	/* the others still talk */
	assert_int_equal(fi_trecv(b.ep, bbuf, 16, NULL, FI_ADDR_UNSPEC, 10, 0, &c[1]), 0);
	assert_int_equal(fi_tsend(a.ep, abuf, 16, NULL, a.peer, 10, &c[2]), 0);
	expect_ok(&a, &c[2], FI_SEND, 0, 0);
	expect_ok(&b, &c[1], FI_RECV, 16, 10);
}

/* The peer's endpoint goes: its DREQ (RDMA CM) ends the connection, so a
 * send already on it ends in an error entry (FI_ECONNRESET), and the next
 * one asks for a new connection nobody takes (FI_ECONNREFUSED, after the
 * asker's 3 s of asking again).  The keeper polls the one NIC of both
 * sides while the test runs: when it took the DREQ before the first send
 * was posted, that send already asks anew (FI_ECONNREFUSED). */
static void
test_peer_gone(void **state)
{
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;
	int c[2];

	assert_int_equal(fi_close(&b.ep->fid), 0);
	b.ep = NULL;
	assert_int_equal(fi_tsend(a.ep, abuf, 64, NULL, a.peer, 11, &c[0]), 0);
	assert_int_equal(next(&a, &e, &err), -FI_EAVAIL);
	assert_ptr_equal(err.op_context, &c[0]);
	assert_true(err.err == FI_ECONNRESET || err.err == FI_ECONNREFUSED);
	assert_int_equal(fi_tsend(a.ep, abuf, 64, NULL, a.peer, 12, &c[1]), 0);
	expect_err(&a, &c[1], FI_ECONNREFUSED, 0);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest resume[] = {
		cmocka_unit_test(test_resume),
	};
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tags_in_order),
		cmocka_unit_test(test_directed),
		cmocka_unit_test(test_truncation),
		cmocka_unit_test(test_rendezvous),
		cmocka_unit_test(test_peek_claim),
		cmocka_unit_test(test_rma),
		cmocka_unit_test(test_no_such_peer),
		cmocka_unit_test(test_peer_gone),
	};

	if (argc < 3)
		return 2;
	setenv("FI_PROVIDER_PATH", argv[1], 1);
	setenv("FI_ETHEREAL_RUNDIR", argv[2], 1);
	setenv("FI_ETHEREAL_DEV", "loop", 1);
	work_dir = argv[2];
	if (argc > 3 && strcmp(argv[3], "resume") == 0) {
		/* RTO 2 ms, 2 retries: a QP gives up within about 10 ms of the
		 * port's going down; a connection asks for new QPs for 20 s */
		char conf[512];
		FILE *f;

		snprintf(conf, sizeof(conf), "%s/fi-resume.ini", argv[2]);
		f = fopen(conf, "w");
		if (f == NULL)
			return 2;
		fprintf(f, "[topology]\nkind = leaf-spine\nleaves = 2\nspines = 2\n"
			   "hosts-per-leaf = 2\n[transport]\nrto-us = 2000\nretry-cnt = 2\n"
			   "reconnect-ms = 20000\n");
		fclose(f);
		setenv("FI_ETHEREAL_CONF", conf, 1);
		setenv("FI_ETHEREAL_FAULT", "flap-period-us=300000,flap-down-us=60000", 1);
		setenv("FI_ETHEREAL_STATS", "1", 1);
		return cmocka_run_group_tests(resume, setup, teardown);
	}
	return cmocka_run_group_tests(tests, setup, teardown);
}
