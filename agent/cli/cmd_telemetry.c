// SPDX-License-Identifier: GPL-2.0
/*
 * dmsc telemetry attach|detach|show: the words only. Like every object,
 * the whole line is checked here before the namespace is entered or the
 * kernel touched; telemetry.c does the rest through libbpf.
 */
#include <arpa/inet.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "err.h"
#include "parse.h"
#include "roce_telemetry.h"
#include "telemetry.h"

static void telemetry_usage(FILE *f)
{
	fprintf(f,
		"Usage: dmsc telemetry attach dev IFNAME [ ingress | egress ]\n"
		"       dmsc telemetry detach dev IFNAME [ ingress | egress ]\n"
		"       dmsc [-j] telemetry show [ dev IFNAME ]\n"
		"       dmsc telemetry serve [ address ADDR ] [ port PORT ]\n"
		"RoCEv2 counters per QP (source, UDP source port, destination, dest QP)\n"
		"at a device's tc hook, ingress by default: packets, bytes, lost PSNs,\n"
		"out-of-order and duplicate packets; plain and SRv6-encapsulated.\n"
		"serve: the same in Prometheus text at http://ADDR:PORT/metrics\n"
		"(default 127.0.0.1 port %u) until interrupted.\n", TELEMETRY_HTTP_PORT);
}

/* A name the kernel could give a device: dev_valid_name()'s rules. */
static int parse_dev(const char *s)
{
	size_t len = strlen(s);

	if (!len || len >= IF_NAMESIZE || !strcmp(s, ".") || !strcmp(s, "..") ||
	    strpbrk(s, "/: \t\n")) {
		errorf("dev \"%s\": not a valid device name", s);
		return -1;
	}
	return 0;
}

static int parse_args(int argc, char **argv, struct telemetry_req *req,
		      bool need_dev, bool dir_ok)
{
	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "dev")) {
			if (++i >= argc)
				return usage_error("dev: needs a device name");
			if (parse_dev(argv[i]))
				return EXIT_USAGE;
			req->dev = argv[i];
		} else if (dir_ok && matches(argv[i], "ingress")) {
			req->dir = RT_INGRESS;
		} else if (dir_ok && matches(argv[i], "egress")) {
			req->dir = RT_EGRESS;
		} else {
			return usage_error("unexpected \"%s\"", argv[i]);
		}
	}
	if (need_dev && !req->dev)
		return usage_error("dev: required");
	return 0;
}

static int parse_serve(int argc, char **argv, struct telemetry_req *req)
{
	unsigned char buf[16];
	uint32_t port;

	req->address = "127.0.0.1";
	req->port = TELEMETRY_HTTP_PORT;
	for (int i = 0; i < argc; i += 2) {
		if (i + 1 >= argc && (!strcmp(argv[i], "address") ||
				      !strcmp(argv[i], "port")))
			return usage_error("%s: needs a value", argv[i]);
		if (!strcmp(argv[i], "address")) {
			if (inet_pton(AF_INET, argv[i + 1], buf) != 1 &&
			    inet_pton(AF_INET6, argv[i + 1], buf) != 1) {
				errorf("address \"%s\": not an IPv4 or IPv6 address",
				       argv[i + 1]);
				return EXIT_USAGE;
			}
			req->address = argv[i + 1];
		} else if (!strcmp(argv[i], "port")) {
			if (parse_u32("port", argv[i + 1], 1, 65535, &port))
				return EXIT_USAGE;
			req->port = (uint16_t)port;
		} else {
			return usage_error("unexpected \"%s\"", argv[i]);
		}
	}
	return 0;
}

int cmd_telemetry(struct cli *cli, int argc, char **argv,
		  struct telemetry_req *req)
{
	const char *verb = argc ? argv[0] : "show";

	(void)cli;
	memset(req, 0, sizeof(*req));
	req->dir = RT_INGRESS;
	err_set_command("telemetry", NULL);
	if (argc) {
		argc--;
		argv++;
	}
	if (matches(verb, "help")) {
		telemetry_usage(stdout);
		req->verb = TELEMETRY_HELP;
		return 0;
	}
	if (matches(verb, "attach")) {
		err_set_command("telemetry", "attach");
		req->verb = TELEMETRY_ATTACH;
		return parse_args(argc, argv, req, true, true);
	}
	if (matches(verb, "detach")) {
		err_set_command("telemetry", "detach");
		req->verb = TELEMETRY_DETACH;
		return parse_args(argc, argv, req, true, true);
	}
	if (matches(verb, "show") || matches(verb, "list")) {
		err_set_command("telemetry", "show");
		req->verb = TELEMETRY_SHOW;
		return parse_args(argc, argv, req, false, false);
	}
	if (matches(verb, "serve")) {
		err_set_command("telemetry", "serve");
		req->verb = TELEMETRY_SERVE;
		return parse_serve(argc, argv, req);
	}
	return usage_error("unknown command \"%s\"", verb);
}
