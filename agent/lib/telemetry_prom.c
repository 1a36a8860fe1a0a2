// SPDX-License-Identifier: GPL-2.0
/*
 * dmsc telemetry serve: the RoCEv2 telemetry counters in Prometheus' text
 * exposition format (version 0.0.4) on a local HTTP port, through
 * libmicrohttpd. Every scrape takes a fresh snapshot of the pinned maps of
 * the namespace, so attachments made or removed meanwhile show at once.
 * Names follow Prometheus conventions: dmsc_roce_ prefix, _total for
 * counters, base units (bytes, seconds).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <microhttpd.h>

#include "cmd.h"
#include "err.h"
#include "parse.h"
#include "telemetry.h"

static const char *const dirs[] = { "ingress", "egress" };

struct metric {
	const char *name, *type, *help;
};

static void head(FILE *f, const struct metric *m)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", m->name, m->help, m->name,
		m->type);
}

/* Device and QP metrics: the name, then one value per series. */
static const struct metric dev_metrics[] = {
	{ "dmsc_roce_dev_packets_total", "counter", "Packets the telemetry program ran on." },
	{ "dmsc_roce_dev_roce_packets_total", "counter", "Well-formed RoCEv2 packets counted in a QP." },
	{ "dmsc_roce_dev_srv6_packets_total", "counter", "RoCEv2 packets inside an outer IPv6 (SRv6) header." },
	{ "dmsc_roce_dev_malformed_packets_total", "counter", "UDP/4791 packets that are not well-formed RoCEv2, by kind." },
	{ "dmsc_roce_dev_fragments_total", "counter", "IP fragments, not parsed." },
	{ "dmsc_roce_dev_unparsed_packets_total", "counter", "IPv6 packets with a header chain too long to follow." },
	{ "dmsc_roce_dev_qp_overflow_packets_total", "counter", "RoCEv2 packets of new QPs that found the QP map full." },
	{ "dmsc_roce_dev_opcode_packets_total", "counter", "Well-formed RoCEv2 packets by BTH opcode." },
};

enum { QM_PACKETS, QM_BYTES, QM_LOST, QM_OOO, QM_DUP, QM_OLD, QM_SRV6,
       QM_NEXT, QM_LAST, QM_OPS, QM_RATE_B, QM_RATE_P, QM_N };

static const struct metric qp_metrics[QM_N] = {
	[QM_PACKETS] = { "dmsc_roce_qp_packets_total", "counter", "RoCEv2 packets of the QP." },
	[QM_BYTES] = { "dmsc_roce_qp_bytes_total", "counter", "UDP payload bytes (BTH to ICRC) of the QP." },
	[QM_LOST] = { "dmsc_roce_qp_lost_psns", "gauge", "PSNs skipped and not (yet) arrived; falls when a late packet comes." },
	[QM_OOO] = { "dmsc_roce_qp_out_of_order_packets_total", "counter", "Packets behind the highest PSN, not seen before." },
	[QM_DUP] = { "dmsc_roce_qp_duplicate_packets_total", "counter", "Packets behind the highest PSN, seen before." },
	[QM_OLD] = { "dmsc_roce_qp_too_old_packets_total", "counter", "Packets further behind than the PSN window." },
	[QM_SRV6] = { "dmsc_roce_qp_srv6_packets_total", "counter", "Packets of the QP inside an outer IPv6 (SRv6) header." },
	[QM_NEXT] = { "dmsc_roce_qp_next_psn", "gauge", "One past the highest PSN seen." },
	[QM_LAST] = { "dmsc_roce_qp_last_seen_timestamp_seconds", "gauge", "Unix time of the QP's latest packet." },
	[QM_OPS] = { "dmsc_roce_qp_opcode_class_packets_total", "counter", "Packets of the QP by opcode class." },
	[QM_RATE_B] = { "dmsc_roce_qp_rate_bytes_per_second", "gauge", "The QP's rate: moving averages (gain 1/8) of 100 ms windows' bytes over their length." },
	[QM_RATE_P] = { "dmsc_roce_qp_rate_packets_per_second", "gauge", "The QP's packet rate: moving averages (gain 1/8) of 100 ms windows' packets over their length." },
};

static const char *const op_classes[RT_OP_CLASSES] = {
	"send", "write", "read", "atomic", "ack", "cnp", "other",
};

static void dev_labels(char *buf, size_t len, const struct telemetry_dev *d)
{
	snprintf(buf, len, "dev=\"%s\",direction=\"%s\"", d->name,
		 dirs[d->k.dir & 1]);
}

static void qp_labels(char *buf, size_t len, const struct telemetry_snap *s,
		      const struct telemetry_qp *q)
{
	const char *dev = "?";
	char src[INET6_ADDRSTRLEN], dst[INET6_ADDRSTRLEN];
	int family = q->k.family == 2 ? AF_INET : AF_INET6;

	for (size_t i = 0; i < s->ndevs; i++)
		if (s->devs[i].k.ifindex == q->k.ifindex &&
		    s->devs[i].k.dir == q->k.dir)
			dev = s->devs[i].name;
	format_addr(family, q->k.src, src, sizeof(src));
	format_addr(family, q->k.dst, dst, sizeof(dst));
	snprintf(buf, len,
		 "dev=\"%s\",direction=\"%s\",src=\"%s\",sport=\"%u\",dst=\"%s\",qpn=\"%u\"",
		 dev, dirs[q->k.dir & 1], src, q->k.sport, dst, q->k.dqpn);
}

static bool qp_attached(const struct telemetry_snap *s,
			const struct telemetry_qp *q)
{
	for (size_t i = 0; i < s->ndevs; i++)
		if (s->devs[i].k.ifindex == q->k.ifindex &&
		    s->devs[i].k.dir == q->k.dir)
			return true;
	return false;
}

void telemetry_prom(FILE *f, const struct telemetry_snap *s)
{
	static const int simple[] = { RT_DEV_PACKETS, RT_DEV_ROCE, RT_DEV_SRV6,
				      -1, RT_DEV_FRAGMENTS, RT_DEV_UNPARSED,
				      RT_DEV_QP_OVERFLOW };
	char l[512];

	for (size_t m = 0; m < sizeof(dev_metrics) / sizeof(*dev_metrics); m++) {
		head(f, &dev_metrics[m]);
		for (size_t i = 0; i < s->ndevs; i++) {
			const struct telemetry_dev *d = &s->devs[i];

			dev_labels(l, sizeof(l), d);
			if (m < sizeof(simple) / sizeof(*simple) && simple[m] >= 0) {
				fprintf(f, "%s{%s} %llu\n", dev_metrics[m].name, l,
					(unsigned long long)d->sum.c[simple[m]]);
			} else if (m == 3) {
				fprintf(f, "%s{%s,kind=\"short\"} %llu\n",
					dev_metrics[m].name, l,
					(unsigned long long)d->sum.c[RT_DEV_SHORT]);
				fprintf(f, "%s{%s,kind=\"bad_version\"} %llu\n",
					dev_metrics[m].name, l,
					(unsigned long long)d->sum.c[RT_DEV_BAD_VERSION]);
			} else {
				for (int op = 0; op < 256; op++)
					if (d->sum.opcodes[op])
						fprintf(f, "%s{%s,opcode=\"%d\"} %llu\n",
							dev_metrics[m].name, l, op,
							(unsigned long long)d->sum.opcodes[op]);
			}
		}
	}
	for (int m = 0; m < QM_N; m++) {
		head(f, &qp_metrics[m]);
		for (size_t i = 0; i < s->nqps; i++) {
			const struct telemetry_qp *q = &s->qps[i];
			const struct rt_qp *v = &q->v;
			unsigned long long x = 0;

			if (!qp_attached(s, q))
				continue;
			qp_labels(l, sizeof(l), s, q);
			switch (m) {
			case QM_PACKETS: x = v->packets; break;
			case QM_BYTES: x = v->bytes; break;
			case QM_LOST: x = v->lost; break;
			case QM_OOO: x = v->out_of_order; break;
			case QM_DUP: x = v->duplicates; break;
			case QM_OLD: x = v->too_old; break;
			case QM_SRV6: x = v->srv6_packets; break;
			case QM_NEXT: x = v->next_psn; break;
			case QM_LAST: {
				/* Monotonic to Unix time, at the snapshot. */
				double t = ((double)s->real_ns -
					    (double)(s->mono_ns - v->last_ns)) / 1e9;

				fprintf(f, "%s{%s} %.3f\n", qp_metrics[m].name, l, t);
				continue;
			}
			case QM_RATE_B:
			case QM_RATE_P: {
				double Bps, pps;

				telemetry_qp_rate(v, s->mono_ns, &Bps, &pps);
				fprintf(f, "%s{%s} %.0f\n", qp_metrics[m].name, l,
					m == QM_RATE_B ? Bps : pps);
				continue;
			}
			case QM_OPS:
				for (int c = 0; c < RT_OP_CLASSES; c++)
					fprintf(f, "%s{%s,class=\"%s\"} %llu\n",
						qp_metrics[m].name, l, op_classes[c],
						(unsigned long long)v->ops[c]);
				continue;
			}
			fprintf(f, "%s{%s} %llu\n", qp_metrics[m].name, l, x);
		}
	}
}

static enum MHD_Result answer(void *cls, struct MHD_Connection *c,
			      const char *url, const char *method,
			      const char *version, const char *upload,
			      size_t *upload_len, void **state)
{
	struct telemetry_snap s;
	struct MHD_Response *r;
	enum MHD_Result ret;
	unsigned int status = MHD_HTTP_OK;
	char *body = NULL;
	size_t len = 0;
	FILE *f;

	(void)cls; (void)version; (void)upload; (void)upload_len; (void)state;
	f = open_memstream(&body, &len);
	if (!f)
		return MHD_NO;
	if (strcmp(method, "GET") && strcmp(method, "HEAD")) {
		status = MHD_HTTP_METHOD_NOT_ALLOWED;
		fputs("GET /metrics\n", f);
	} else if (strcmp(url, "/metrics")) {
		status = MHD_HTTP_NOT_FOUND;
		fputs("the counters are at /metrics\n", f);
	} else if (telemetry_snapshot(&s, 0)) {
		status = MHD_HTTP_INTERNAL_SERVER_ERROR;
		fputs("cannot read the telemetry maps (see dmsc's stderr)\n", f);
	} else {
		telemetry_prom(f, &s);
		telemetry_snap_free(&s);
	}
	fclose(f);
	r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
				status == MHD_HTTP_OK ?
				"text/plain; version=0.0.4; charset=utf-8" :
				"text/plain; charset=utf-8");
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

struct MHD_Daemon *telemetry_http_start(const char *address, uint16_t port)
{
	struct sockaddr_storage ss;
	struct MHD_Daemon *d;
	unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD;

	memset(&ss, 0, sizeof(ss));
	if (inet_pton(AF_INET6, address, &((struct sockaddr_in6 *)&ss)->sin6_addr) == 1) {
		ss.ss_family = AF_INET6;
		((struct sockaddr_in6 *)&ss)->sin6_port = htons(port);
		flags |= MHD_USE_IPv6;
	} else {
		inet_pton(AF_INET, address, &((struct sockaddr_in *)&ss)->sin_addr);
		ss.ss_family = AF_INET;
		((struct sockaddr_in *)&ss)->sin_port = htons(port);
	}
	d = MHD_start_daemon(flags, port, NULL, NULL, answer, NULL,
			     MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
			     MHD_OPTION_END);
	if (!d) {
		errorf("cannot listen on %s port %u: %m", address, port);
		return NULL;
	}
	fprintf(stderr, "dmsc: telemetry: serving http://%s%s%s:%u/metrics\n",
		ss.ss_family == AF_INET6 ? "[" : "", address,
		ss.ss_family == AF_INET6 ? "]" : "", port);
	return d;
}

void telemetry_http_stop(struct MHD_Daemon *d)
{
	if (d)
		MHD_stop_daemon(d);
}

int telemetry_serve(const struct telemetry_req *req)
{
	struct MHD_Daemon *d;
	sigset_t set;
	int sig;

	/* Stop on SIGINT/SIGTERM: blocked here, so the server's thread too. */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	d = telemetry_http_start(req->address, req->port);
	if (!d)
		return EXIT_FAIL;
	sigwait(&set, &sig);
	telemetry_http_stop(d);
	return EXIT_OK;
}
