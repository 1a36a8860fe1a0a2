/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dmsc-agent configuration (JSON). Roles are those of DMSC-LMT
 * (draft-yang-dmsc-distributed-model): a node runs any mix of them.
 */
#ifndef DMSC_CONFIG_H
#define DMSC_CONFIG_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#include "token.h"

/*
 * The roles (sr, srd, smo, aam, mg) are those a certificate names:
 * enum peer_role, one set of bits for the configuration and the wire.
 */
#include "net/peer.h"

#define CONFIG_TM_MAX_DEVS	64
#define CONFIG_TM_PORT		9791	/* dmsc telemetry serve's too */
#define CONFIG_TM_INTERVAL_MS	1000

/* sr: the RoCEv2 telemetry the agent attaches, serves and reports. */
struct telemetry_config {
	bool enabled;			/* the section is there */
	size_t ndevs;
	struct {
		char dev[16];		/* IF_NAMESIZE */
		int dir;		/* enum rt_dir: 0 ingress, 1 egress */
	} devs[CONFIG_TM_MAX_DEVS];
	bool prometheus;		/* serve /metrics (default) */
	char address[64];		/* IPv4 or IPv6 literal */
	unsigned int port;
	unsigned int report_interval_ms;
	/*
	 * "" = no reports; "smo": over the sr's TLS connection to its
	 * controller (sr.srd), whose smo role reads them; else a Unix
	 * socket's absolute path
	 */
	char report_to[108];
};

#define CONFIG_PATH_MAX	256
#define CONFIG_REPORT_TO_SMO	"smo"
#define CONFIG_SR_SRDS		4
#define CONFIG_HEARTBEAT_MS	1000
#define CONFIG_FULL_MS		30000
#define CONFIG_DIGEST_MS	30000
#define CONFIG_NODE_REPORT_MS	10000

/* "tls": this node's certificate for the agents' mutual TLS. */
struct tls_files {
	bool set;
	char ca[CONFIG_PATH_MAX], cert[CONFIG_PATH_MAX], key[CONFIG_PATH_MAX];
	char crl[CONFIG_PATH_MAX];	/* "" = none */
};

/* "srd": the registry the srd role serves. */
struct srd_config {
	bool set;
	char listen[128];		/* host:port, [v6]:port */
	char sqlite[CONFIG_PATH_MAX];	/* the store: one of the two */
	char etcd[512];			/* comma-separated member URLs */
	unsigned int full_interval_ms;	/* anti-entropy: full table period */
};

#define CONFIG_RSVP_CREDIT	65536
#define CONFIG_RSVP_REFRESH_MS	30000
#define CONFIG_RSVP_RETRY_MS	200
#define CONFIG_RSVP_RETRIES	3

/*
 * "sr.rsvp": the RSVP-CBFC speaker the sr role runs on its event loop
 * (daemon/sr/rsvp_speaker.c), as dmsc-rsvp run does on its own.
 */
struct rsvp_config {
	bool enabled;			/* the section is there */
	char address6[64];		/* this node's, "" = no IPv6 speaker */
	char address4[64];		/* this node's, "" = no IPv4 speaker */
	unsigned long long credit;	/* bytes reserved for the upstream */
	bool mb;			/* answer in the draft's MB form */
	unsigned int refresh_ms;	/* PATH refresh at a source */
	unsigned int retry_ms;		/* PATH retransmission, doubling */
	unsigned int retries;		/* ... before giving up */
	char control[108];		/* dmsc-rsvp -C's socket */
};

/* "sr": the SRDs this node's sr role learns routes from. */
struct sr_config {
	size_t nsrd;
	struct {
		char node[64];		/* the node its certificate must name */
		char address[128];
	} srd[CONFIG_SR_SRDS];
	unsigned int heartbeat_ms;	/* renewal of this node's MIs */
	unsigned int digest_interval_ms; /* its table's digest to the SRD; 0 = none */
	unsigned int node_report_ms;	/* type 4 to the controller's smo; 0 = none */
	char state[CONFIG_PATH_MAX];	/* "" = none */
	bool kernel;			/* program the dmsc module (default) */
	bool probe;			/* ICMPv6 echo to its instances (default) */
	struct rsvp_config rsvp;
};

#define CONFIG_ELECTION_KEY	"/dmsc/smo/leader"
#define CONFIG_ELECTION_LEASE_S	5
#define CONFIG_POLICIES_KEY	"/dmsc/smo/policies"
/* the leader's set as etcd holds it, at most (etcd takes 1.5 MiB a request) */
#define CONFIG_RELAY_MAX_BYTES	1048576

/*
 * "smo": the orchestrator's policies (daemon/smo/smo_role.c), and its
 * leader election when the store is etcd (daemon/srd/election.h).
 */
struct smo_config {
	bool set;
	char policies[CONFIG_PATH_MAX];	/* the policy file; "" = none */
	char election_key[256];		/* etcd key of the seat */
	char policies_key[256];		/* etcd key of the leader's whole set */
	unsigned int election_lease_s;	/* the leader's etcd lease */
	unsigned int relay_max_bytes;	/* the leader's set in etcd, at most */
};

#define CONFIG_MG_SRDS		4
#define CONFIG_MG_LOG_PER_S	10
#define CONFIG_MG_CONNECTIONS	256
#define CONFIG_MG_CONNECTIONS_PER_IP	16

/*
 * "mg": the gateway (daemon/mg/): the SRDs it learns routes from, as
 * sr.srd, and the HTTP entry it serves on.
 */
struct mg_config {
	bool set;
	size_t nsrd;
	struct {
		char node[64];
		char address[128];
	} srd[CONFIG_MG_SRDS];
	char listen[128];		/* host:port, [v6]:port */
	unsigned int digest_interval_ms; /* its table's digest to the SRD; 0 = none */
	unsigned int connections;	/* HTTP connections at once */
	unsigned int log_per_s;		/* refusals logged per second; 0 = none */
	unsigned int connections_per_ip;	/* HTTP connections of one client; 0 = any */
	/* fnmatch(3) of the nodes whose tokens it takes (default: its own) */
	char token_nodes[64];
	/* PEM certificate and key of the HTTPS entry; "": plain HTTP */
	char https_cert[CONFIG_PATH_MAX], https_key[CONFIG_PATH_MAX];
};

#define CONFIG_AAM_GRANTS	64
#define CONFIG_AAM_LIFETIME_S	300
#define CONFIG_AAM_KID		"aam"
#define CONFIG_TOKENS_SKEW_S	30
#define CONFIG_AAM_REVOKED_PREFIX	"/dmsc/aam/revoked/"

/*
 * "aam.grants[]": a subject (fnmatch(3) pattern), the scope it may get,
 * and the nodes (fnmatch(3) pattern, default "*") whose SRs or gateways
 * may ask for it.
 */
struct aam_grant {
	char sub[TOKEN_SUB_MAX];
	char scope[TOKEN_SUB_MAX];	/* IPv6 ADDR/LEN or "*" */
	char nodes[TOKEN_NAME_MAX];	/* fnmatch(3) of the asking peer's node */
};

/* "aam": the token issuer of the aam role (daemon/aam/aam_role.c). */
struct aam_config {
	bool set;
	char key[CONFIG_PATH_MAX];	/* PEM Ed25519 private key */
	char kid[TOKEN_NAME_MAX];
	unsigned int lifetime_s;	/* default and maximum of a token */
	char revoked[CONFIG_PATH_MAX];	/* the revoked jtis' file; "" = none */
	/* with srd.store.etcd: the etcd keys of the AAMs' revoked jtis */
	char revoked_prefix[256];
	size_t ngrants;
	struct aam_grant grants[CONFIG_AAM_GRANTS];
};

/* "tokens": the verifier of the sr and mg roles (daemon/tokens.h). */
struct tokens_config {
	bool enabled;			/* the section was given */
	char aam_key[CONFIG_PATH_MAX];	/* PEM Ed25519 public key */
	char kid[TOKEN_NAME_MAX];	/* "" = any */
	unsigned int skew_s;
};

struct agent_config {
	char node[64];		/* this node's name */
	unsigned int roles;	/* enum peer_role bits */
	char controller[128];	/* host:port of the SRD/SMO; "" = none */
	char listen[128];	/* host:port to serve on; "" = none */
	char control[108];	/* the local Unix socket; "" = none */
	struct telemetry_config telemetry;
	struct tls_files tls;
	struct srd_config srd;
	struct sr_config sr;
	struct smo_config smo;
	struct mg_config mg;
	struct aam_config aam;
	struct tokens_config tokens;
};

/* "host:port", "[v6]:port" into @sa. -1 if it is neither. */
int config_addr_parse(const char *text, struct sockaddr_storage *sa,
		      socklen_t *len);

/*
 * Parse @text into @cfg. On error returns -1 with a message naming the
 * field ("roles[1]: unknown role \"foo\"") in @err.
 */
int config_parse(const char *text, struct agent_config *cfg, char *err,
		 int errlen);
int config_load(const char *path, struct agent_config *cfg, char *err,
		int errlen);
const char *config_role_name(unsigned int role);

#endif /* DMSC_CONFIG_H */
