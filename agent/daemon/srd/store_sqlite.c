// SPDX-License-Identifier: GPL-2.0
/*
 * The registry's embedded store: one SQLite file in WAL mode with
 * synchronous=FULL, so a change is on disk when the call returns. Three
 * tables: the instances, a log of the last changes (for SRs that come back
 * after a short absence), and one row of metadata (the revision, and the
 * revision up to which the log was cut).
 *
 * Leases live in memory (lease.c): a renewal is a heartbeat, thousands a
 * second, and writing each to disk would buy nothing, because after a
 * restart every lease starts afresh anyway (see registry.h). The file is opened in exclusive locking mode: a second SRD
 * on the same file would keep leases of its own and expire what the first
 * renews.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "lease.h"
#include "registry.h"

struct sqlite_store {
	struct srd_store base;
	sqlite3 *db;
	uint64_t rev, compacted, log_keep;
	struct lease_table leases;
	sqlite3_stmt *get_node, *upsert, *delete, *log, *cut, *set_meta;
	char dir[4096];		/* the store's directory: backups go there */
};

#define S(s) ((struct sqlite_store *)(s))

static const char schema[] =
	"CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v INTEGER NOT NULL);"
	"INSERT OR IGNORE INTO meta VALUES ('schema', 1), ('revision', 0),"
	" ('compacted', 0);"
	"CREATE TABLE IF NOT EXISTS instance ("
	" id TEXT PRIMARY KEY, node TEXT NOT NULL, sid TEXT NOT NULL,"
	" prefix TEXT NOT NULL, rtype TEXT NOT NULL, capability INTEGER NOT NULL,"
	" state INTEGER NOT NULL, ttl_ms INTEGER NOT NULL, mod_rev INTEGER NOT NULL);"
	"CREATE TABLE IF NOT EXISTS change ("
	" rev INTEGER PRIMARY KEY, op INTEGER NOT NULL, id TEXT NOT NULL,"
	" node TEXT NOT NULL, sid TEXT, prefix TEXT, rtype TEXT,"
	" capability INTEGER, state INTEGER, ttl_ms INTEGER);";

static int fail_db(struct sqlite_store *st, const char *what, char *err,
		   size_t errlen)
{
	snprintf(err, errlen, "store: %s: %s", what, sqlite3_errmsg(st->db));
	return -1;
}

static int exec(struct sqlite_store *st, const char *sql, char *err,
		size_t errlen)
{
	char *msg = NULL;

	if (sqlite3_exec(st->db, sql, NULL, NULL, &msg) == SQLITE_OK)
		return 0;
	snprintf(err, errlen, "store: %s", msg ? msg : "error");
	sqlite3_free(msg);
	return -1;
}

/* Run a statement that returns no row, and reset it. */
static int step_done(struct sqlite_store *st, sqlite3_stmt *q, char *err,
		     size_t errlen)
{
	int rc = sqlite3_step(q);

	sqlite3_reset(q);
	sqlite3_clear_bindings(q);
	if (rc == SQLITE_DONE)
		return 0;
	return fail_db(st, sqlite3_sql(q), err, errlen);
}

static void rollback(struct sqlite_store *st)
{
	sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
}

/*
 * One more revision, logged, inside the caller's transaction. The log is
 * cut to its last log_keep entries; what was cut is remembered, so that
 * changes() can tell "nothing new" from "too old".
 */
static int log_change(struct sqlite_store *st, enum srd_op op,
		      const struct srd_instance *i, char *err, size_t errlen)
{
	uint64_t rev = st->rev + 1, cut = 0;
	sqlite3_stmt *q = st->log;

	sqlite3_bind_int64(q, 1, rev);
	sqlite3_bind_int(q, 2, op);
	sqlite3_bind_text(q, 3, i->id, -1, SQLITE_STATIC);
	sqlite3_bind_text(q, 4, i->node, -1, SQLITE_STATIC);
	if (op == SRD_OP_PUT) {
		sqlite3_bind_text(q, 5, i->sid, -1, SQLITE_STATIC);
		sqlite3_bind_text(q, 6, i->prefix, -1, SQLITE_STATIC);
		sqlite3_bind_text(q, 7, i->rtype, -1, SQLITE_STATIC);
		sqlite3_bind_int64(q, 8, i->capability);
		sqlite3_bind_int(q, 9, i->state);
		sqlite3_bind_int64(q, 10, i->ttl_ms);
	}
	if (step_done(st, q, err, errlen))
		return -1;
	if (rev > st->log_keep) {
		cut = rev - st->log_keep;
		sqlite3_bind_int64(st->cut, 1, cut);
		if (step_done(st, st->cut, err, errlen))
			return -1;
	}
	sqlite3_bind_text(st->set_meta, 1, "revision", -1, SQLITE_STATIC);
	sqlite3_bind_int64(st->set_meta, 2, rev);
	if (step_done(st, st->set_meta, err, errlen))
		return -1;
	if (cut > st->compacted) {
		sqlite3_bind_text(st->set_meta, 1, "compacted", -1, SQLITE_STATIC);
		sqlite3_bind_int64(st->set_meta, 2, cut);
		if (step_done(st, st->set_meta, err, errlen))
			return -1;
	}
	return 0;
}

/* After a COMMIT, the revision the file now holds is ours too. */
static void committed(struct sqlite_store *st, uint64_t changes)
{
	st->rev += changes;
	if (st->rev > st->log_keep && st->rev - st->log_keep > st->compacted)
		st->compacted = st->rev - st->log_keep;
}

static int sq_put(struct srd_store *s, const struct srd_instance *i,
		  int64_t now_ms, uint64_t *rev, char *err, size_t errlen)
{
	struct sqlite_store *st = S(s);
	sqlite3_stmt *q = st->upsert;
	int rc;

	if (srd_instance_check(i, err, errlen))
		return -1;
	if (exec(st, "BEGIN IMMEDIATE", err, errlen))
		return -1;
	/* An id stays with the node that registered it until it goes. */
	sqlite3_bind_text(st->get_node, 1, i->id, -1, SQLITE_STATIC);
	rc = sqlite3_step(st->get_node);
	if (rc == SQLITE_ROW &&
	    strcmp((const char *)sqlite3_column_text(st->get_node, 0), i->node)) {
		snprintf(err, errlen, "id: %s is registered on node %s", i->id,
			 sqlite3_column_text(st->get_node, 0));
		sqlite3_reset(st->get_node);
		rollback(st);
		return -1;
	}
	sqlite3_reset(st->get_node);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		goto db;

	sqlite3_bind_text(q, 1, i->id, -1, SQLITE_STATIC);
	sqlite3_bind_text(q, 2, i->node, -1, SQLITE_STATIC);
	sqlite3_bind_text(q, 3, i->sid, -1, SQLITE_STATIC);
	sqlite3_bind_text(q, 4, i->prefix, -1, SQLITE_STATIC);
	sqlite3_bind_text(q, 5, i->rtype, -1, SQLITE_STATIC);
	sqlite3_bind_int64(q, 6, i->capability);
	sqlite3_bind_int(q, 7, i->state);
	sqlite3_bind_int64(q, 8, i->ttl_ms);
	sqlite3_bind_int64(q, 9, st->rev + 1);
	if (step_done(st, q, err, errlen) ||
	    log_change(st, SRD_OP_PUT, i, err, errlen))
		goto out;
	/* the lease first: after the commit, nothing may fail */
	if (lease_put(&st->leases, i->id, now_ms + i->ttl_ms, i->ttl_ms)) {
		snprintf(err, errlen, "store: out of memory");
		goto out;
	}
	if (exec(st, "COMMIT", err, errlen)) {
		/*
		 * Rolled back first, then asked: a new instance's lease
		 * goes, a replaced one's stays (its row is back).
		 */
		rollback(st);
		sqlite3_bind_text(st->get_node, 1, i->id, -1, SQLITE_STATIC);
		if (sqlite3_step(st->get_node) != SQLITE_ROW)
			lease_del(&st->leases, i->id);
		sqlite3_reset(st->get_node);
		return -1;
	}
	committed(st, 1);
	if (rev)
		*rev = st->rev;
	return 0;
db:
	fail_db(st, "put", err, errlen);
out:
	rollback(st);
	return -1;
}

/* Is @id (registered) someone else's than @node's? Names the owner. */
static int not_owner(struct sqlite_store *st, const char *id, const char *node,
		     char *err, size_t errlen)
{
	int rc, bad = 0;

	if (!node)
		return 0;
	sqlite3_bind_text(st->get_node, 1, id, -1, SQLITE_STATIC);
	rc = sqlite3_step(st->get_node);
	if (rc == SQLITE_ROW &&
	    strcmp((const char *)sqlite3_column_text(st->get_node, 0), node)) {
		srd_not_owner(id, (const char *)sqlite3_column_text(st->get_node, 0),
			      node, err, errlen);
		bad = 1;
	}
	sqlite3_reset(st->get_node);
	return bad;
}

static int sq_renew(struct srd_store *s, const char *id, const char *node,
		    int64_t now_ms, char *err, size_t errlen)
{
	struct sqlite_store *st = S(s);
	const struct lease *l = lease_get(&st->leases, id);

	/* a lease past its end is expired, even if expire() has not run */
	if (l && l->expires_ms > now_ms) {
		if (not_owner(st, id, node, err, errlen))
			return -1;
		return lease_renew(&st->leases, id, now_ms);
	}
	snprintf(err, errlen, "no instance %.63s", id);
	return -1;
}

/* Remove @id (registered on @node) as @op, inside a transaction. */
static int remove_one(struct sqlite_store *st, const char *id,
		      const char *node, enum srd_op op, char *err,
		      size_t errlen)
{
	struct srd_instance i;

	memset(&i, 0, sizeof(i));
	snprintf(i.id, sizeof(i.id), "%s", id);
	snprintf(i.node, sizeof(i.node), "%s", node);
	sqlite3_bind_text(st->delete, 1, id, -1, SQLITE_STATIC);
	if (step_done(st, st->delete, err, errlen))
		return -1;
	return log_change(st, op, &i, err, errlen);
}

static int sq_del(struct srd_store *s, const char *id, const char *node,
		  uint64_t *rev, char *err, size_t errlen)
{
	struct sqlite_store *st = S(s);
	char owner[SRD_NODE_MAX];
	int rc;

	if (exec(st, "BEGIN IMMEDIATE", err, errlen))
		return -1;
	sqlite3_bind_text(st->get_node, 1, id, -1, SQLITE_STATIC);
	rc = sqlite3_step(st->get_node);
	if (rc != SQLITE_ROW) {
		sqlite3_reset(st->get_node);
		rollback(st);
		if (rc != SQLITE_DONE)
			return fail_db(st, "del", err, errlen);
		snprintf(err, errlen, "no instance %.63s", id);
		return -1;
	}
	snprintf(owner, sizeof(owner), "%s", sqlite3_column_text(st->get_node, 0));
	sqlite3_reset(st->get_node);
	if (node && strcmp(node, owner)) {
		rollback(st);
		return srd_not_owner(id, owner, node, err, errlen);
	}
	if (remove_one(st, id, owner, SRD_OP_DEL, err, errlen) ||
	    exec(st, "COMMIT", err, errlen)) {
		rollback(st);
		return -1;
	}
	committed(st, 1);
	lease_del(&st->leases, id);
	if (rev)
		*rev = st->rev;
	return 0;
}

static int sq_expire(struct srd_store *s, int64_t now_ms, srd_change_fn fn,
		     void *arg, char *err, size_t errlen)
{
	struct sqlite_store *st = S(s);
	struct srd_change *ch = NULL;
	char (*ids)[SRD_ID_MAX] = NULL;
	uint64_t rev0 = st->rev;
	size_t n = 0, k;
	int rc, ret = -1;

	if (lease_expired(&st->leases, now_ms, &ids, &n)) {
		snprintf(err, errlen, "store: out of memory");
		return -1;
	}
	if (!n)
		return 0;
	ch = calloc(n, sizeof(*ch));
	if (!ch) {
		snprintf(err, errlen, "store: out of memory");
		free(ids);
		return -1;
	}
	if (exec(st, "BEGIN IMMEDIATE", err, errlen))
		goto out;
	/* log_change() numbers from st->rev: count up as they are logged */
	for (k = 0; k < n; k++) {
		ch[k].op = SRD_OP_EXPIRE;
		memcpy(ch[k].inst.id, ids[k], SRD_ID_MAX);
		sqlite3_bind_text(st->get_node, 1, ids[k], -1, SQLITE_STATIC);
		rc = sqlite3_step(st->get_node);
		if (rc == SQLITE_ROW)
			snprintf(ch[k].inst.node, sizeof(ch[k].inst.node), "%s",
				 sqlite3_column_text(st->get_node, 0));
		sqlite3_reset(st->get_node);
		if (rc != SQLITE_ROW) {
			fail_db(st, "expire: instance without a row", err, errlen);
			goto out;
		}
		ch[k].rev = st->rev + 1;
		if (remove_one(st, ch[k].inst.id, ch[k].inst.node,
			       SRD_OP_EXPIRE, err, errlen))
			goto out;
		st->rev++;
	}
	st->rev = rev0;
	if (exec(st, "COMMIT", err, errlen))
		goto out;
	committed(st, n);
	for (k = 0; k < n; k++)
		lease_del(&st->leases, ch[k].inst.id);
	ret = 0;
	/* told only once it is on disk */
	for (k = 0; k < n && fn; k++)
		if (fn(&ch[k], arg))
			break;
out:
	if (ret) {
		st->rev = rev0;
		rollback(st);
	}
	free(ids);
	free(ch);
	return ret;
}

static void row_instance(sqlite3_stmt *q, int c0, struct srd_instance *i)
{
	snprintf(i->id, sizeof(i->id), "%s", sqlite3_column_text(q, c0));
	snprintf(i->node, sizeof(i->node), "%s", sqlite3_column_text(q, c0 + 1));
	if (sqlite3_column_type(q, c0 + 2) == SQLITE_NULL)
		return;	/* a DEL or EXPIRE in the log */
	snprintf(i->sid, sizeof(i->sid), "%s", sqlite3_column_text(q, c0 + 2));
	snprintf(i->prefix, sizeof(i->prefix), "%s", sqlite3_column_text(q, c0 + 3));
	snprintf(i->rtype, sizeof(i->rtype), "%s", sqlite3_column_text(q, c0 + 4));
	i->capability = sqlite3_column_int64(q, c0 + 5);
	i->state = sqlite3_column_int(q, c0 + 6);
	i->ttl_ms = sqlite3_column_int64(q, c0 + 7);
}

static int sq_list(struct srd_store *s, srd_inst_fn fn, void *arg,
		   uint64_t *rev, char *err, size_t errlen)
{
	struct sqlite_store *st = S(s);
	const struct lease *l;
	struct srd_instance i;
	sqlite3_stmt *q;
	int rc;

	if (sqlite3_prepare_v2(st->db,
			       "SELECT i.id, i.node, i.sid, i.prefix, i.rtype,"
			       " i.capability, i.state, i.ttl_ms, i.mod_rev"
			       " FROM instance i ORDER BY i.id",
			       -1, &q, NULL) != SQLITE_OK)
		return fail_db(st, "list", err, errlen);
	/* one process writes, and not while we read: st->rev is the list's */
	if (rev)
		*rev = st->rev;
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		memset(&i, 0, sizeof(i));
		row_instance(q, 0, &i);
		i.mod_rev = sqlite3_column_int64(q, 8);
		l = lease_get(&st->leases, i.id);
		i.expires_ms = l ? l->expires_ms : 0;
		if (fn(&i, arg))
			break;
	}
	sqlite3_finalize(q);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return fail_db(st, "list", err, errlen);
	return 0;
}

static int sq_changes(struct srd_store *s, uint64_t since, srd_change_fn fn,
		      void *arg, char *err, size_t errlen)
{
	struct sqlite_store *st = S(s);
	struct srd_change c;
	sqlite3_stmt *q;
	int rc;

	if (since > st->rev) {
		snprintf(err, errlen, "revision %" PRIu64 " is ahead of the store's %"
			 PRIu64 " (another store?)", since, st->rev);
		return -1;
	}
	if (since < st->compacted)
		return SRD_GAP;
	if (sqlite3_prepare_v2(st->db,
			       "SELECT rev, op, id, node, sid, prefix, rtype,"
			       " capability, state, ttl_ms FROM change"
			       " WHERE rev > ? ORDER BY rev", -1, &q, NULL) != SQLITE_OK)
		return fail_db(st, "changes", err, errlen);
	sqlite3_bind_int64(q, 1, since);
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		memset(&c, 0, sizeof(c));
		c.rev = sqlite3_column_int64(q, 0);
		c.op = sqlite3_column_int(q, 1);
		row_instance(q, 2, &c.inst);
		c.inst.mod_rev = c.op == SRD_OP_PUT ? c.rev : 0;
		if (fn(&c, arg))
			break;
	}
	sqlite3_finalize(q);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return fail_db(st, "changes", err, errlen);
	return 0;
}

static uint64_t sq_revision(struct srd_store *s)
{
	return S(s)->rev;
}

static void sq_close(struct srd_store *s)
{
	struct sqlite_store *st = S(s);

	if (!st)
		return;
	sqlite3_finalize(st->get_node);
	sqlite3_finalize(st->upsert);
	sqlite3_finalize(st->delete);
	sqlite3_finalize(st->log);
	sqlite3_finalize(st->cut);
	sqlite3_finalize(st->set_meta);
	sqlite3_close(st->db);
	lease_free(&st->leases);
	free(st);
}

/*
 * VACUUM INTO on the SRD's own connection: the exclusive lock keeps
 * sqlite3(1)'s .backup out of the file, and this is a consistent,
 * compacted copy, made between two statements (nothing else runs on the
 * agent's loop meanwhile: 133 bytes an instance, milliseconds).
 *
 * Whoever reaches the control socket names the copy, and the agent runs
 * as root: so only a plain name, in the store's own directory, made here
 * first with O_EXCL | O_NOFOLLOW and mode 0600 (VACUUM INTO takes an
 * empty file), never a path, a symbolic link or a file that exists. Then
 * the copy and its directory are fsync()ed: a backup answered is on disk.
 */
static int prepare(struct sqlite_store *st, sqlite3_stmt **q, const char *sql,
		   char *err, size_t errlen);

static int sq_backup(struct srd_store *s, const char *name, char *path,
		     size_t pathlen, char *err, size_t errlen)
{
	struct sqlite_store *st = S(s);
	sqlite3_stmt *q = NULL;
	int rc, fd, dfd;

	if (!*name || strlen(name) > 255 || strchr(name, '/') ||
	    !strcmp(name, ".") || !strcmp(name, "..")) {
		snprintf(err, errlen, "backup: \"%.64s\": a file name (no '/'), made in %s",
			 name, st->dir);
		return -1;
	}
	if ((size_t)snprintf(path, pathlen, "%s/%s", st->dir, name) >= pathlen) {
		snprintf(err, errlen, "backup: %s/%s: too long", st->dir, name);
		return -1;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		snprintf(err, errlen, "backup: %s: %s%s", path, strerror(errno),
			 errno == EEXIST ? " (a backup never overwrites)" : "");
		return -1;
	}
	close(fd);
	if (prepare(st, &q, "VACUUM INTO ?1", err, errlen))
		goto fail;
	sqlite3_bind_text(q, 1, path, -1, SQLITE_TRANSIENT);
	rc = sqlite3_step(q);
	sqlite3_finalize(q);
	if (rc != SQLITE_DONE) {
		snprintf(err, errlen, "backup: %s: %s", path, sqlite3_errmsg(st->db));
		goto fail;
	}
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	dfd = open(st->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	rc = fd < 0 || fsync(fd) || dfd < 0 || fsync(dfd);
	if (rc)
		snprintf(err, errlen, "backup: %s: %s", path, strerror(errno));
	if (fd >= 0)
		close(fd);
	if (dfd >= 0)
		close(dfd);
	if (!rc)
		return 0;
fail:
	unlink(path);
	return -1;
}

static const struct srd_store_ops sqlite_ops = {
	.name = "sqlite",
	.put = sq_put,
	.renew = sq_renew,
	.del = sq_del,
	.expire = sq_expire,
	.list = sq_list,
	.changes = sq_changes,
	.revision = sq_revision,
	.backup = sq_backup,
	.close = sq_close,
};

static int prepare(struct sqlite_store *st, sqlite3_stmt **q, const char *sql,
		   char *err, size_t errlen)
{
	if (sqlite3_prepare_v3(st->db, sql, -1, SQLITE_PREPARE_PERSISTENT, q,
			       NULL) == SQLITE_OK)
		return 0;
	return fail_db(st, sql, err, errlen);
}

static int meta_get(struct sqlite_store *st, const char *k, uint64_t *v,
		    char *err, size_t errlen)
{
	sqlite3_stmt *q;
	int rc;

	if (prepare(st, &q, "SELECT v FROM meta WHERE k = ?", err, errlen))
		return -1;
	sqlite3_bind_text(q, 1, k, -1, SQLITE_STATIC);
	rc = sqlite3_step(q);
	if (rc == SQLITE_ROW)
		*v = sqlite3_column_int64(q, 0);
	sqlite3_finalize(q);
	if (rc == SQLITE_ROW)
		return 0;
	snprintf(err, errlen, "store: no %s in meta: not a registry file?", k);
	return -1;
}

static int restart_leases(struct sqlite_store *st, int64_t now_ms, char *err,
			  size_t errlen)
{
	sqlite3_stmt *q;
	int rc;

	if (prepare(st, &q, "SELECT id, ttl_ms FROM instance", err, errlen))
		return -1;
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		uint32_t ttl = sqlite3_column_int64(q, 1);

		if (lease_put(&st->leases, (const char *)sqlite3_column_text(q, 0),
			      now_ms + ttl, ttl)) {
			sqlite3_finalize(q);
			snprintf(err, errlen, "store: out of memory");
			return -1;
		}
	}
	sqlite3_finalize(q);
	if (rc == SQLITE_DONE)
		return 0;
	return fail_db(st, "leases", err, errlen);
}

struct srd_store *srd_store_sqlite_open(const char *path, uint64_t log_keep,
					int64_t now_ms, char *err,
					size_t errlen)
{
	struct sqlite_store *st = calloc(1, sizeof(*st));
	uint64_t schema_v;
	int rc;

	if (!st) {
		snprintf(err, errlen, "store: out of memory");
		return NULL;
	}
	st->base.ops = &sqlite_ops;
	st->log_keep = log_keep ? log_keep : 1;
	snprintf(st->dir, sizeof(st->dir), "%s", path);
	if (strrchr(st->dir, '/'))
		*strrchr(st->dir, '/') = '\0';
	else
		snprintf(st->dir, sizeof(st->dir), ".");
	if (!st->dir[0])
		snprintf(st->dir, sizeof(st->dir), "/");
	rc = sqlite3_open_v2(path, &st->db, SQLITE_OPEN_READWRITE |
			     SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
	if (rc != SQLITE_OK) {
		snprintf(err, errlen, "store %s: %s", path,
			 st->db ? sqlite3_errmsg(st->db) : "cannot open");
		goto fail;
	}
	sqlite3_extended_result_codes(st->db, 1);
	/*
	 * Exclusive first, then WAL: the lock is taken by the first write,
	 * so write at once (BEGIN EXCLUSIVE) to learn now, not at the first
	 * registration, that another SRD holds the file.
	 */
	if (exec(st, "PRAGMA locking_mode = EXCLUSIVE", err, errlen))
		goto fail;
	rc = sqlite3_exec(st->db, "PRAGMA journal_mode = WAL; BEGIN EXCLUSIVE; COMMIT",
			  NULL, NULL, NULL);
	if ((rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED) {
		snprintf(err, errlen, "store %s: in use by another process", path);
		goto fail;
	}
	if (rc != SQLITE_OK) {
		snprintf(err, errlen, "store %s: %s", path, sqlite3_errmsg(st->db));
		goto fail;
	}
	if (exec(st, "PRAGMA synchronous = FULL", err, errlen) ||
	    exec(st, schema, err, errlen) ||
	    meta_get(st, "schema", &schema_v, err, errlen) ||
	    meta_get(st, "revision", &st->rev, err, errlen) ||
	    meta_get(st, "compacted", &st->compacted, err, errlen))
		goto fail;
	if (schema_v != 1) {
		snprintf(err, errlen, "store %s: schema %" PRIu64 ", this srd reads 1",
			 path, schema_v);
		goto fail;
	}
	if (prepare(st, &st->get_node, "SELECT node FROM instance WHERE id = ?", err, errlen) ||
	    prepare(st, &st->upsert,
		    "INSERT INTO instance VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"
		    " ON CONFLICT (id) DO UPDATE SET sid = ?3, prefix = ?4,"
		    " rtype = ?5, capability = ?6, state = ?7, ttl_ms = ?8,"
		    " mod_rev = ?9", err, errlen) ||
	    prepare(st, &st->delete, "DELETE FROM instance WHERE id = ?", err, errlen) ||
	    prepare(st, &st->log,
		    "INSERT INTO change VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", err, errlen) ||
	    prepare(st, &st->cut, "DELETE FROM change WHERE rev <= ?", err, errlen) ||
	    prepare(st, &st->set_meta, "UPDATE meta SET v = ?2 WHERE k = ?1", err, errlen))
		goto fail;
	/* every lease restarts now: see registry.h */
	if (restart_leases(st, now_ms, err, errlen))
		goto fail;
	return &st->base;
fail:
	sq_close(&st->base);
	return NULL;
}
