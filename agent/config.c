// SPDX-License-Identifier: GPL-2.0
/* dmsc-agent configuration: read and check every field, name what is wrong. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <json-c/json.h>

#include "config.h"

static const struct {
	enum agent_role role;
	const char *name;
} role_names[] = {
	{ ROLE_SR, "sr" }, { ROLE_SRD, "srd" },
	{ ROLE_SMO, "smo" }, { ROLE_AAM, "aam" },
};

#define NROLES (sizeof(role_names) / sizeof(*role_names))

const char *config_role_name(enum agent_role role)
{
	size_t i;

	for (i = 0; i < NROLES; i++)
		if (role_names[i].role == role)
			return role_names[i].name;
	return "?";
}

static int get_string(struct json_object *root, const char *key, char *dst,
		      size_t size, bool required, char *err, int errlen)
{
	struct json_object *v;
	const char *s;

	if (!json_object_object_get_ex(root, key, &v)) {
		if (!required)
			return 0;
		snprintf(err, errlen, "%s: required", key);
		return -1;
	}
	if (!json_object_is_type(v, json_type_string)) {
		snprintf(err, errlen, "%s: expected a string", key);
		return -1;
	}
	s = json_object_get_string(v);
	if (!*s || strlen(s) >= size) {
		snprintf(err, errlen, "%s: must be 1..%zu characters", key,
			 size - 1);
		return -1;
	}
	strcpy(dst, s);
	return 0;
}

static int get_roles(struct json_object *root, unsigned int *roles, char *err,
		     int errlen)
{
	struct json_object *arr;
	size_t i, j, n;

	if (!json_object_object_get_ex(root, "roles", &arr)) {
		snprintf(err, errlen, "roles: required");
		return -1;
	}
	if (!json_object_is_type(arr, json_type_array) ||
	    !(n = json_object_array_length(arr))) {
		snprintf(err, errlen, "roles: expected a non-empty array");
		return -1;
	}
	*roles = 0;
	for (i = 0; i < n; i++) {
		struct json_object *r = json_object_array_get_idx(arr, i);
		const char *s;

		if (!json_object_is_type(r, json_type_string)) {
			snprintf(err, errlen, "roles[%zu]: expected a string", i);
			return -1;
		}
		s = json_object_get_string(r);
		for (j = 0; j < NROLES; j++)
			if (!strcmp(s, role_names[j].name))
				break;
		if (j == NROLES) {
			snprintf(err, errlen,
				 "roles[%zu]: unknown role \"%s\" (sr, srd, smo, aam)",
				 i, s);
			return -1;
		}
		if (*roles & role_names[j].role) {
			snprintf(err, errlen, "roles[%zu]: \"%s\" given twice",
				 i, s);
			return -1;
		}
		*roles |= role_names[j].role;
	}
	return 0;
}

static const char *const known_keys[] = {
	"node", "roles", "controller", "listen",
};

int config_parse(const char *text, struct agent_config *cfg, char *err,
		 int errlen)
{
	struct json_tokener *tok = json_tokener_new();
	struct json_object *root;
	int ret = -1;

	memset(cfg, 0, sizeof(*cfg));
	if (!tok) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	root = json_tokener_parse_ex(tok, text, (int)strlen(text));
	if (!root || json_tokener_get_error(tok) != json_tokener_success) {
		snprintf(err, errlen, "not valid JSON: %s (at byte %zu)",
			 json_tokener_error_desc(json_tokener_get_error(tok)),
			 json_tokener_get_parse_end(tok));
		goto out;
	}
	if (!json_object_is_type(root, json_type_object)) {
		snprintf(err, errlen, "expected a JSON object at the top");
		goto out;
	}
	/* An unknown key is most likely a typo: refuse it, by name. */
	json_object_object_foreach(root, key, val) {
		size_t i;

		(void)val;
		for (i = 0; i < sizeof(known_keys) / sizeof(*known_keys); i++)
			if (!strcmp(key, known_keys[i]))
				break;
		if (i == sizeof(known_keys) / sizeof(*known_keys)) {
			snprintf(err, errlen, "%s: unknown field", key);
			goto out;
		}
	}
	if (get_string(root, "node", cfg->node, sizeof(cfg->node), true, err,
		       errlen) ||
	    get_roles(root, &cfg->roles, err, errlen) ||
	    get_string(root, "controller", cfg->controller,
		       sizeof(cfg->controller), false, err, errlen) ||
	    get_string(root, "listen", cfg->listen, sizeof(cfg->listen), false,
		       err, errlen))
		goto out;
	ret = 0;
out:
	json_object_put(root);
	json_tokener_free(tok);
	return ret;
}

int config_load(const char *path, struct agent_config *cfg, char *err,
		int errlen)
{
	char buf[65536];
	size_t n;
	FILE *f;

	f = fopen(path, "r");
	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	n = fread(buf, 1, sizeof(buf) - 1, f);
	if (!feof(f)) {
		fclose(f);
		snprintf(err, errlen, "%s: larger than %zu bytes", path,
			 sizeof(buf) - 1);
		return -1;
	}
	fclose(f);
	buf[n] = '\0';
	return config_parse(buf, cfg, err, errlen);
}
