// SPDX-License-Identifier: GPL-2.0
/* Unit tests of the dmsc-agent configuration parser. */
#include <string.h>

#include "config.h"
#include "tests/ktap.h"

static struct agent_config cfg;
static char err[256];

static int parse(const char *text)
{
	err[0] = '\0';
	return config_parse(text, &cfg, err, sizeof(err));
}

int main(void)
{
	ktap_plan(10);
	ktap_check(!parse("{\"node\":\"pe1\",\"roles\":[\"sr\",\"aam\"]}") &&
		   !strcmp(cfg.node, "pe1") &&
		   cfg.roles == (ROLE_SR | ROLE_AAM), "valid config");
	ktap_check(!parse("{\"node\":\"c\",\"roles\":[\"srd\",\"smo\"],"
			  "\"listen\":\"127.0.0.1:7450\"}") &&
		   !strcmp(cfg.listen, "127.0.0.1:7450"), "listen address");
	ktap_check(parse("{\"roles\":[\"sr\"]}") &&
		   !strcmp(err, "node: required"), "node required");
	ktap_check(parse("{\"node\":\"a\",\"roles\":[\"sr\",\"foo\"]}") &&
		   !strncmp(err, "roles[1]: unknown role", 22),
		   "unknown role named with its index");
	ktap_check(parse("{\"node\":\"a\",\"roles\":[\"sr\",\"sr\"]}") &&
		   strstr(err, "given twice"), "duplicate role");
	ktap_check(parse("{\"node\":\"a\",\"roles\":[]}") &&
		   !strncmp(err, "roles:", 6), "empty roles");
	ktap_check(parse("{\"node\":7,\"roles\":[\"sr\"]}") &&
		   !strcmp(err, "node: expected a string"), "node type");
	ktap_check(parse("{\"node\":\"a\",\"roles\":[\"sr\"],\"rols\":1}") &&
		   !strcmp(err, "rols: unknown field"), "unknown field named");
	ktap_check(parse("{\"node\":\"a\",") && strstr(err, "not valid JSON"),
		   "truncated JSON");
	ktap_check(parse("[1]") && strstr(err, "object"), "not an object");
	return ktap_finish();
}
