/* SPDX-License-Identifier: BSD-3-Clause
 * One endpoint of the provider in a process of its own, for
 * tests/check_fi_lost.py: a peer that really exits (SIGKILL, nothing said)
 * is reported to the one that sends to it, not waited for.  Lines on
 * stdin and stdout drive it; names go as hex.
 *
 *   fi-peer wait   prints its name; takes the peer's; receives one message,
 *                  prints "ready", then waits to be killed
 *   fi-peer lose   prints its name; takes the peer's; sends one message,
 *                  prints "sent"; on "killed": a rendezvous send and an
 *                  inject to the peer, then expects the send's error entry
 *                  FI_EHOSTUNREACH, the EQ's error entry for the peer, and
 *                  the next send to it refused with -FI_EHOSTUNREACH;
 *                  prints "lost after S s" and exits 0 if all came
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#define BIG (1u << 20)
/* longer than the peer's retries and its conf's reconnect-ms together */
#define GIVE_UP_S 60.0

static struct fid_ep *ep;
static struct fid_cq *cq;
static struct fid_eq *eq;

static int
die(const char *what, int r)
{
	fprintf(stderr, "fi-peer: %s: %s\n", what, fi_strerror(-r));
	exit(1);
}

static double
now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void
line_in(char *buf, size_t n)
{
	if (fgets(buf, (int)n, stdin) == NULL)
		die("stdin closed", -FI_EIO);
	buf[strcspn(buf, "\n")] = '\0';
}

/* The next completion: 1, or -FI_EAVAIL with *err read; dies after
 * GIVE_UP_S. */
static int
next(struct fi_cq_tagged_entry *e, struct fi_cq_err_entry *err)
{
	double until = now_s() + GIVE_UP_S;

	for (;;) {
		ssize_t r = fi_cq_read(cq, e, 1);

		if (r == 1)
			return 1;
		if (r == -FI_EAVAIL) {
			memset(err, 0, sizeof(*err));
			if (fi_cq_readerr(cq, err, 0) != 1)
				die("fi_cq_readerr", -FI_EIO);
			return -FI_EAVAIL;
		}
		if (r != -FI_EAGAIN)
			die("fi_cq_read", (int)r);
		if (now_s() > until)
			die("no completion", -FI_ETIMEDOUT);
	}
}

int
main(int argc, char **argv)
{
	struct fi_info *hints = fi_allocinfo(), *info;
	struct fi_av_attr aa = {.type = FI_AV_TABLE};
	struct fi_cq_attr ca = {.format = FI_CQ_FORMAT_TAGGED, .size = 64};
	struct fi_eq_attr ea = {.size = 8};
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_av *av;
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;
	char name[64], hex[160], line[160];
	size_t namelen = sizeof(name);
	fi_addr_t peer;
	uint8_t *buf = calloc(1, BIG);
	bool lose;
	int r, c[3];

	if (argc != 2 || (strcmp(argv[1], "wait") && strcmp(argv[1], "lose")) || !buf || !hints)
		return 2;
	lose = strcmp(argv[1], "lose") == 0;
	hints->caps = FI_TAGGED | FI_MSG;
	hints->ep_attr->type = FI_EP_RDM;
	hints->fabric_attr->prov_name = strdup("ethereal");
	if ((r = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &info)) != 0)
		die("fi_getinfo", r);
	if ((r = fi_fabric(info->fabric_attr, &fabric, NULL)) ||
	    (r = fi_domain(fabric, info, &domain, NULL)) ||
	    (r = fi_av_open(domain, &aa, &av, NULL)) ||
	    (r = fi_endpoint(domain, info, &ep, NULL)) ||
	    (r = fi_cq_open(domain, &ca, &cq, NULL)) || (r = fi_eq_open(fabric, &ea, &eq, NULL)) ||
	    (r = fi_ep_bind(ep, &av->fid, 0)) ||
	    (r = fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV)) ||
	    (r = fi_ep_bind(ep, &eq->fid, 0)) || (r = fi_enable(ep)) ||
	    (r = fi_getname(&ep->fid, name, &namelen)))
		die("setup", r);
	for (size_t i = 0; i < namelen; i++)
		snprintf(hex + 2 * i, 3, "%02x", (uint8_t)name[i]);
	printf("%s\n", hex);
	fflush(stdout);
	line_in(line, sizeof(line));
	namelen = strlen(line) / 2;
	for (size_t i = 0; i < namelen && i < sizeof(name); i++)
		sscanf(line + 2 * i, "%2hhx", (unsigned char *)&name[i]);
	if (fi_av_insert(av, name, 1, &peer, 0, NULL) != 1)
		die("fi_av_insert", -FI_EINVAL);
	if (!lose) {
		if ((r = (int)fi_trecv(ep, buf, 64, NULL, FI_ADDR_UNSPEC, 1, 0, &c[0])) != 0 ||
		    next(&e, &err) != 1)
			die("the first message", r ? r : -err.err);
		printf("ready\n");
		fflush(stdout);
		for (;;)
			fi_cq_read(cq, &e, 0); /* progress, until killed */
	}
	if ((r = (int)fi_tsend(ep, buf, 64, NULL, peer, 1, &c[0])) != 0 || next(&e, &err) != 1)
		die("the first message", r ? r : -err.err);
	printf("sent\n");
	fflush(stdout);
	line_in(line, sizeof(line)); /* "killed" */
	double t0 = now_s();

	if ((r = (int)fi_tsend(ep, buf, BIG, NULL, peer, 2, &c[1])) != 0 ||
	    (r = (int)fi_tinject(ep, buf, 32, peer, 3)) != 0)
		die("the sends after", r);
	if (next(&e, &err) != -FI_EAVAIL || err.op_context != &c[1] || err.err != FI_EHOSTUNREACH)
		die("the send to a peer gone: no FI_EHOSTUNREACH", -FI_EOTHER);
	printf("lost after %.1f s\n", now_s() - t0);
	/* the EQ says so too */
	{
		struct fi_eq_err_entry ee = {0};
		uint32_t ev;
		ssize_t n = fi_eq_read(eq, &ev, line, sizeof(line), 0);

		if (n != -FI_EAVAIL || fi_eq_readerr(eq, &ee, 0) != sizeof(ee) ||
		    ee.err != FI_EHOSTUNREACH || ee.fid != &ep->fid)
			die("no EQ error entry for the peer", (int)n);
	}
	/* and the next operation to it */
	r = (int)fi_tsend(ep, buf, 64, NULL, peer, 4, &c[2]);
	if (r != -FI_EHOSTUNREACH)
		die("the next send was not told", r ? r : -FI_EOTHER);
	printf("told\n");
	fi_close(&ep->fid);
	fi_close(&cq->fid);
	fi_close(&eq->fid);
	fi_close(&av->fid);
	fi_close(&domain->fid);
	fi_close(&fabric->fid);
	fi_freeinfo(info);
	fi_freeinfo(hints);
	free(buf);
	return 0;
}
