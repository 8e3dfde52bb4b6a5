#include "postgres_statements.hpp"

#include <cstdint>
#include <cstdio>
#include <utility>
#include <vector>

#include "base/fnv1a.hpp"
#include "base/validate.hpp"
#include "contract/backend.hpp"
#include "contract/table_family.hpp"
#include "postgres_session.hpp"
#include "sqlock/error.hpp"

namespace sqlock::detail {
extern const char* const postgres_schema_sql;  // sql/postgres/schema.sql, compiled in
}

namespace sqlock::detail::postgres {
namespace {

// The row columns of table alias `t`, as listed in the header. Rows written
// by other programs may hold timestamps sqlock never writes: the infinities
// (to_char gives NULL for them, and "expires - now()" fails with 22008) are
// shown as 'infinity'/'-infinity' and given a finite seconds_left beyond any
// real date (timestamptz ends in 294276 AD), so callers can do arithmetic.
// seconds_left is rounded *up* to whole milliseconds: timestamps carry
// microseconds, and rounding 0.4 ms to 0 would call a row expired that the
// statements (expires > now()) still treat as held.
std::string columns(const std::string& t) {
    auto utc_text = [&](const std::string& col) {
        return "coalesce(to_char(" + t + "." + col +
               " AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.MS'), " + t + "." + col + "::text)";
    };
    return t + ".id, " + t + ".lockstring::text, " + utc_text("created") + ", " +
           utc_text("expires") + ", coalesce(" + t + ".locked_by, ''), CASE WHEN isfinite(" + t +
           ".expires) THEN (ceil(extract(epoch FROM " + t +
           ".expires - now()) * 1000) / 1000)::float8 WHEN " + t +
           ".expires > now() THEN 1e13::float8 ELSE -1e13::float8 END";
}

// A new row's created, in milliseconds since the epoch (floored, as to_char's
// MS is): the client writes it, and expires = created + lease, as UTC text.
// Through whole microseconds first: exact whether extract() gives numeric
// (PostgreSQL 14 on) or float8 (before), where "* 1000" then floor could
// land a millisecond short.
const std::string created_ms = "(extract(epoch FROM t.created) * 1000000)::bigint / 1000";

std::string millis(const char* param) {
    return std::string("(") + param + "::bigint * interval '1 millisecond')";
}

// Insert the row, or take over an expired one. The take-over copies the id
// the proposed row drew from the sequence, so the new holder always gets a
// new, larger id: the fencing token never repeats. A live row is left alone
// by the WHERE, without an error or an aborted transaction. (A failed attempt
// still draws an id, which leaves gaps; ids only need to grow.)
std::string upsert(const std::string& table, const std::string& rows,
                   const std::string& returning = "t.id, " + created_ms) {
    return "INSERT INTO " + table + " AS t (lockstring, created, expires, locked_by) " + rows +
           " ON CONFLICT (lockstring) DO UPDATE SET id = excluded.id,"
           " created = excluded.created, expires = excluded.expires,"
           " locked_by = excluded.locked_by WHERE t.expires <= now() RETURNING " +
           returning;
}

// Ids must grow in the order holders get a name, or a fencing resource would
// turn away the rightful holder. nextval() alone does not promise that: an
// attempt can draw its id, stall, and insert after a later-drawn id was
// acquired and released. So each attempt first takes a transaction-level
// advisory lock on (table, name) and only then draws its id: the lock is
// taken in the WHERE of the INSERT's row source (turn_taken()), a filter
// evaluated before the projection that draws nextval() (for a single lock,
// a one-time filter of the Result node). The table part of the key is its
// OID, so "locks" and "public.locks" agree. The `turn` CTE holds only that
// constant, so the planner inlines and folds it (a CTE that took the lock
// itself was materialised: a CTE Scan and a tuple store on every attempt),
// and, being in the WITH clause, it is looked up before the INSERT's
// target: a missing schema is reported as such (3F000), not as a missing
// table. Slots of a semaphore share their semaphore's key ("x#2" locks
// with "x"): the caller passes the name without its "#N" (turn_name()),
// which is what sqlock before 0.2 computed on the server with
// regexp_replace, so old and new clients take the same lock. Held for the
// one short statement.
std::string turn_cte(const std::string& quoted_table) {
    return "turn AS (SELECT hashtext('sqlock ' || '" + quoted_table +
           "'::regclass::oid::text) AS space) ";
}

std::string turn_taken(const std::string& key) {
    return "pg_advisory_xact_lock(turn.space, hashtext(" + key + ")) IS NOT NULL";
}

// The advisory lock key that says "someone waits for `turn`": a release
// notifies only while one is held (see `notify` in statements() and
// waiting_sql()). Its own key space beside the turn's. Both sides pass the
// turn_name() they compute on the client, so a name and each of its slot
// rows ("x", "x#2") share a key. Whole names, not buckets: a release tries
// the key exclusively until it commits, so two concurrent releases of names
// that shared a key would each find it taken and NOTIFY (names such as
// "job-1" ... "job-8" folded into one bucket made 9% of 8 processes'
// releases notify). The listener bounds how many keys it holds
// (ReleaseHub's max_said_keys).
std::string waiting_key(const std::string& quoted_table, const std::string& turn) {
    return "hashtext('sqlock waiting ' || '" + quoted_table + "'::regclass::oid::text), hashtext(" +
           turn + ")";
}

// Whether a live waiter in queue `Q` goes before the holder of ticket
// `before` (INT64_MAX: a caller that does not wait) for `name`: one queued
// before it, or any at all once its own place has lapsed. A waiter frozen
// or cut off long enough for its place to lapse may still send an attempt
// with its old ticket when it comes back; it has left the line, and must
// not take the name from under the waiters who moved up meanwhile. (The
// inner probe runs only when someone waits behind it.)
std::string waiter_ahead(const std::string& Q, const std::string& name, const std::string& before) {
    return "EXISTS (SELECT 1 FROM " + Q + " AS q WHERE q.lockstring = " + name +
           " AND q.expires > now() AND (q.id < " + before + " OR NOT EXISTS (SELECT 1 FROM " + Q +
           " AS own WHERE own.id = " + before + " AND own.expires > now())))";
}

// A caller without a place in line (it does not wait, or has not joined
// yet): no row while any live waiter is queued in `Q` for `name`.
std::string nobody_waiting(const std::string& Q, const std::string& name) {
    return " AND NOT EXISTS (SELECT 1 FROM " + Q + " AS q WHERE q.lockstring = " + name +
           " AND q.expires > now())";
}

// "column = ANY (ARRAY(subquery))": one batch of a batched delete, found by
// its key. "column IN (subquery)" planned generically takes the subquery's
// LIMIT $n for a tenth of the table and hashes every row the subquery could
// return, for each batch (measured on 280,000 expired rows: 30-44 ms per
// batch of 1,000, against 2-3 ms); the array runs the subquery once and
// probes the key. The caller's outer condition is re-checked on rows that
// changed meanwhile, so a row taken over since the subquery saw it survives.
std::string in_batch(const std::string& column, const std::string& subquery) {
    return column + " = ANY (ARRAY(" + subquery + "))";
}

// 64 bits of FNV-1a, as hex: names a statement text.
std::string text_hash(const std::string& text) {
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(fnv1a64(text)));
    return buf;
}

// A timestamptz expression as UTC text, NULL for NULL.
std::string utc(const std::string& expr) {
    return "to_char((" + expr + ") AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.MS')";
}

// The runs `r` matching `where`, joined to their lock rows `l`, as listed in
// the header. A run still marked running whose lock row is gone or expired
// reads as lost, ended at the row's expiry while the row is there.
std::string runs_select(const PgTarget& target, const std::string& where,
                        const std::string& order) {
    const std::string& R = target.family.side(SideTable::runs).quoted;  // the runs table
    const std::string live = "l.expires > now()";
    const std::string end = "CASE WHEN r.outcome <> 'running' THEN r.ended WHEN " + live +
                            " THEN NULL ELSE l.expires END";
    const std::string until = "CASE WHEN r.outcome <> 'running' THEN r.ended WHEN " + live +
                              " THEN now() ELSE l.expires END";
    return "SELECT r.id, r.name::text, " + utc("r.window_start") +
           ", r.host::text, r.pid, r.username::text, r.program::text, r.fencing_id, " +
           utc("r.started") + ", " + utc(end) +
           ", CASE WHEN r.outcome <> 'running' THEN r.outcome::text WHEN " + live +
           " THEN 'running' ELSE 'lost' END, r.exit_status, r.exit_signal,"
           " (round(extract(epoch FROM (" +
           until + ") - r.started) * 1000) / 1000)::float8, " + run_attempt_column(R, "r") +
           " FROM " + R + " AS r LEFT JOIN " + target.family.table().quoted +
           " AS l ON l.id = r.fencing_id WHERE " + where + " ORDER BY " + order;
}

// Whether the queue table `Q` exists and this role may use it: a role not
// granted the queue of a table made before it waits as it did before the
// queue, rather than failing every acquisition. (CASE: the sequence of a
// table that is not there cannot be looked up.)
std::string queue_usable(const std::string& Q) {
    auto may = [&](const char* privilege) {
        // The name as text: a regclass literal would be looked up (and
        // fail) when the statement is parsed, whatever the CASE says.
        return "has_table_privilege('" + Q + "'::text, '" + privilege + "')";
    };
    return "CASE WHEN to_regclass('" + Q + "') IS NULL THEN false ELSE " + may("SELECT") + " AND " +
           may("INSERT") + " AND " + may("UPDATE") + " AND " + may("DELETE") +
           " AND coalesce(has_sequence_privilege(pg_get_serial_sequence('" + Q +
           "'::text, 'id'), 'USAGE'), true) END";
}

// Query::side_tables: per side table, whether it exists (the queue: and
// this role may use it).
std::string side_tables_sql(const PgTarget& target) {
    std::string sql;
    for (SideTable side : common_side_tables) {
        const std::string& name = target.family.side(side).quoted;
        sql += sql.empty() ? "SELECT " : ", ";
        sql += side == SideTable::queue ? queue_usable(name)
                                        : "to_regclass('" + name + "') IS NOT NULL";
    }
    return sql;
}

// A UTC text parameter as timestamptz.
std::string utc_param(const char* param) {
    return std::string("(") + param + "::timestamp AT TIME ZONE 'UTC')";
}

}  // namespace

std::string turn_name(const std::string& lockstring) {
    return lockstring.substr(0, slot_suffix_at(lockstring));
}

std::string name_channel(const PgTarget& target, const std::string& turn) {
    // The table's last part only: "locks" and "public.locks" name one table
    // and must agree; tables of that name in two schemas share channels,
    // which costs a spurious wake-up at most.
    return "sqlock_n_" + text_hash(table_basename(target.table) + '\0' + turn);
}

// The first statement of each: the name's turn, read committed (what
// follows reads what the turn's previous holder committed).
std::string shared_turn_sql(const PgTarget& target, const SharedValues& v) {
    return read_committed +
           ("SELECT pg_advisory_xact_lock(hashtext('sqlock ' || '" + target.family.table().quoted +
            "'::regclass::oid::text), hashtext(" + v.turn + "));\n");
}

namespace {

std::string shared_turn(const PgTarget& target, const SharedValues& v) {
    return shared_turn_sql(target, v);
}

// The live marker of the name is there.
std::string marker_live(const PgTarget& target, const SharedValues& v) {
    return "EXISTS (SELECT 1 FROM " + target.family.table().quoted +
           " AS m WHERE m.lockstring = " + v.name + " AND m.locked_by = " + v.marker +
           " AND m.expires > now())";
}

}  // namespace

// clang-format off
std::string shared_renew_sql(const PgTarget& target, const SharedValues& v) {
    return shared_turn(target, v) + shared_renew_work(target, v);
}

std::string shared_renew_work(const PgTarget& target, const SharedValues& v) {
    const std::string& T = target.family.table().quoted;
    return
        "WITH o(id, lockstring, created, expires, locked_by, seconds_left, until) AS"
        " (UPDATE " + T + " AS t SET expires = now() + " + millis(v.lease_ms.c_str()) +
        " WHERE t.id = " + v.id + " AND t.locked_by = " + v.locked_by + " AND t.expires > now()"
        " AND " + marker_live(target, v) + " RETURNING " + columns("t") + ", t.expires),"
        " m AS (UPDATE " + T + " AS t SET expires = greatest(t.expires, (SELECT until FROM o))"
        " WHERE t.lockstring = " + v.name + " AND t.locked_by = " + v.marker +
        " AND EXISTS (SELECT 1 FROM o) RETURNING 1)"
        " SELECT o.id, o.lockstring, o.created, o.expires, o.locked_by, o.seconds_left"
        " FROM o, (SELECT count(*) FROM m) AS extended";
}

namespace {

// The release's work, after its turn (shared_release_sql): `v` holds
// literals, or the parameters of the prepared form (statements()).
std::string shared_release_work(const PgTarget& target, const SharedValues& v) {
    const std::string& T = target.family.table().quoted;
    const std::string min_hold = millis(v.min_hold_ms.c_str());
    // The other live holders' latest expiry, and ours when min_hold keeps
    // our row: the marker's new expiry, or NULL when it goes. The holders
    // are found by the expires index, latest first: the unique index orders
    // by the database's collation, in which a prefix need not be a range,
    // and a scan of the table reads every dead row too (15 ms a release on
    // a table with 200,000 dead rows, against 1-2 ms this way; an index for
    // the prefix made every exclusive acquisition 10-25% slower).
    return
        "WITH k AS (UPDATE " + T + " SET expires = created + " + min_hold +
        " WHERE id = " + v.id + " AND locked_by = " + v.locked_by + " AND " + v.min_hold_ms +
        " > 0 AND created + " + min_hold + " > now() RETURNING expires),"
        " d AS (DELETE FROM " + T + " WHERE id = " + v.id + " AND locked_by = " + v.locked_by +
        " AND NOT EXISTS (SELECT 1 FROM k) RETURNING id),"
        " s AS (SELECT max(x.e) AS e FROM ((SELECT h.expires AS e FROM " + T + " AS h"
        " WHERE left(h.lockstring, length(" + v.prefix + ")) = " + v.prefix +
        " AND h.id <> " + v.id + " AND h.expires > now() ORDER BY h.expires DESC LIMIT 1)"
        " UNION ALL SELECT expires FROM k) AS x),"
        " dm AS (DELETE FROM " + T + " WHERE lockstring = " + v.name + " AND locked_by = " +
        v.marker + " AND (SELECT e FROM s) IS NULL RETURNING lockstring),"
        " um AS (UPDATE " + T + " SET expires = (SELECT e FROM s) WHERE lockstring = " + v.name +
        " AND locked_by = " + v.marker + " AND (SELECT e FROM s) IS NOT NULL RETURNING 1)"
        " SELECT (SELECT count(*) FROM k), (SELECT count(*) FROM d),"
        " (SELECT count(CASE WHEN pg_try_advisory_xact_lock(" + waiting_key(T, v.turn) +
        ") THEN NULL ELSE pg_notify(" + v.channel + ", dm.lockstring) END) FROM dm),"
        " (SELECT count(*) FROM um)";
}

}  // namespace

std::string shared_release_sql(const PgTarget& target, const SharedValues& v) {
    return shared_turn(target, v) + shared_release_work(target, v);
}

std::string shared_release_execute_sql(const PgTarget& target, const SharedValues& v,
                                       const std::string& prepared) {
    return shared_turn(target, v) + "EXECUTE \"" + prepared + "\"" +
        shared_release_arguments(v);
}

std::string shared_release_arguments(const SharedValues& v) {
    return "(" + v.id + ", " + v.locked_by + ", " + v.min_hold_ms + ", " + v.name + ", " +
        v.marker + ", " + v.prefix + ", " + v.turn + ", " + v.channel + ")";
}

std::string shared_renew_arguments(const SharedValues& v) {
    return "(" + v.id + ", " + v.locked_by + ", " + v.lease_ms + ", " + v.name + ", " + v.marker +
        ")";
}
// clang-format on

namespace {

// ARRAY[a, b, ...]::type[] of literals.
std::string array_of(const std::vector<std::string>& items, const char* type) {
    std::string out = "ARRAY[";
    for (std::size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + items[i];
    return out + "]::" + type + "[]";
}

// The first statement of a mixed set's renewal or release: the shared
// names' turns, in the order acquisitions take them (sorted), read committed
// as shared_turn().
std::string mixed_set_turns(const std::string& T, const MixedSetValues& v) {
    return read_committed + ("WITH " + turn_cte(T)) + "SELECT count(" + turn_taken("s.k") +
           ") FROM turn, (SELECT DISTINCT k FROM unnest(" + array_of(v.turns, "text") +
           ") AS x(k) ORDER BY k) AS s;\n";
}

}  // namespace

// clang-format off
std::string mixed_set_renew_sql(const PgTarget& target, const MixedSetValues& v) {
    const std::string& T = target.family.table().quoted;
    const std::string until = "now() + " + millis(v.lease_ms.c_str());
    // In a snapshot taken after the turns, as shared_renew_sql for every
    // shared name at once: s pairs each holder row with its name.
    return mixed_set_turns(T, v) +
        "WITH s(id, n) AS (SELECT * FROM unnest(" + array_of(v.shared_ids, "bigint") + ", " +
        array_of(v.shared_names, "text") + ")),"
        " o(id, lockstring, created, expires, locked_by, seconds_left) AS (UPDATE " + T +
        " AS t SET expires = " + until + " WHERE t.id = ANY (" + array_of(v.ids, "bigint") + ")"
        " AND t.locked_by = " + v.locked_by + " AND t.expires > now()"
        " AND (NOT EXISTS (SELECT 1 FROM s WHERE s.id = t.id) OR EXISTS (SELECT 1 FROM s JOIN " +
        T + " AS m ON m.lockstring = s.n WHERE s.id = t.id AND m.locked_by = " + v.marker +
        " AND m.expires > now())) RETURNING " + columns("t") + "),"
        " m AS (UPDATE " + T + " AS t SET expires = greatest(t.expires, " + until + ") FROM s"
        " WHERE t.lockstring = s.n AND t.locked_by = " + v.marker +
        " AND s.id IN (SELECT id FROM o) RETURNING 1)"
        " SELECT o.* FROM o, (SELECT count(*) FROM m) AS extended";
}
// clang-format on

std::string mixed_set_release_sql(const PgTarget& target, const MixedSetValues& v) {
    const std::string& T = target.family.table().quoted;
    auto array = array_of;
    // In a snapshot taken after the turns, as shared_release_sql for every
    // shared name at once: our rows go; each marker is fitted to the live
    // holders left, found by the expires index, or goes with the last; the
    // names whose rows went are told to their listeners.
    return mixed_set_turns(T, v) + "WITH d AS (DELETE FROM " + T + " WHERE id = ANY (" +
           array(v.ids, "bigint") +
           ")"
           " AND coalesce(locked_by, '') = " +
           v.locked_by +
           " RETURNING id, lockstring),"
           " names AS (SELECT x.n, x.p FROM unnest(" +
           array(v.shared_names, "text") + ", " + array(v.prefixes, "text") +
           ") AS x(n, p)),"
           " s AS (SELECT names.n, (SELECT h.expires FROM " +
           T +
           " AS h"
           " WHERE left(h.lockstring, length(names.p)) = names.p"
           " AND h.id <> ALL (" +
           array(v.shared_ids, "bigint") +
           ") AND h.expires > now()"
           " ORDER BY h.expires DESC LIMIT 1) AS e FROM names),"
           " dm AS (DELETE FROM " +
           T + " AS t USING s WHERE t.lockstring = s.n AND t.locked_by = " + v.marker +
           " AND s.e IS NULL RETURNING t.lockstring),"
           " um AS (UPDATE " +
           T +
           " AS t SET expires = s.e FROM s WHERE t.lockstring = s.n"
           " AND t.locked_by = " +
           v.marker +
           " AND s.e IS NOT NULL RETURNING 1),"
           " w AS (SELECT x.n, x.k, x.ch FROM unnest(" +
           array(v.names, "text") + ", " + array(v.name_turns, "text") + ", " +
           array(v.channels, "text") +
           ") AS x(n, k, ch)"
           " WHERE x.n IN (SELECT lockstring FROM d) OR x.n IN (SELECT lockstring FROM dm))"
           " SELECT (SELECT count(*) FROM d),"
           " (SELECT count(CASE WHEN pg_try_advisory_xact_lock(" +
           waiting_key(T, "w.k") +
           ") THEN NULL ELSE pg_notify(w.ch, w.n) END) FROM w), (SELECT count(*) FROM um)";
}

std::string waiting_sql(const PgTarget& target, bool on) {
    return std::string("SELECT pg_advisory_") + (on ? "lock" : "unlock") + "_shared(" +
           waiting_key(target.family.table().quoted, "$1::text") + ")";
}

std::string acquire_sql(const PgTarget& target, AcquireLayer up_to) {
    const std::string& T = target.family.table().quoted;
    const std::string row = "SELECT $1::text, now(), now() + " + millis("$2") + ", $3::text";
    if (up_to == AcquireLayer::take_over) return upsert(T, row, "t.id, t.created");
    std::string taken = turn_taken("$4::text");
    if (up_to == AcquireLayer::queue_gate)
        taken += nobody_waiting(target.family.side(SideTable::queue).quoted, "$5::text");
    return "WITH " + turn_cte(T) + upsert(T, row + " FROM turn WHERE " + taken, "t.id, t.created");
}

namespace {

using Entries = std::vector<std::pair<std::string, std::string>>;

// Table and channel are validated identifier text: safe in a literal.
// A release wakes waiters only when some listening session says it waits
// (holds the waiting key shared): most releases have no waiter, and
// NOTIFY's commit takes a lock that all notifying transactions of the
// server queue for (measured: 8 processes taking and releasing distinct
// names ran 8% slower with a NOTIFY on every release). The try-lock holds the key until our
// commit, so a waiter cannot say it waits between our look and the
// delete becoming visible: its own statement waits for that commit, and
// its next attempt then finds the row gone.
// `turn` is the parameter holding the row's turn_name(), `channel` the
// one holding its name_channel(): only the listeners of that name hear
// the release.
std::string notify_sql(const std::string& T, const std::string& turn, const std::string& channel) {
    return "CASE WHEN pg_try_advisory_xact_lock(" + waiting_key(T, turn) +
           ") THEN NULL ELSE pg_notify(" + channel + ", lockstring) END";
}

// The single lock's and the slots' acquisitions.
void acquire_statements(const PgTarget& target, Entries& out) {
    const std::string& T = target.family.table().quoted;
    const std::string& Q = target.family.side(SideTable::queue).quoted;  // the queue table
    // clang-format off

    // $1 lockstring, $2 lease ms, $3 locked_by, $4 turn name. Our new row's
    // id and created, or nothing: everything else in the row is the caller's
    // own input. Read in binary format (postgres_libpq.hpp): the server
    // sends the timestamp as it holds it, without the numeric arithmetic of
    // created_ms (about 1 us of the server's insert and delete).
    //
    // One statement, also when the row is there and expired: a plain insert
    // first (ON CONFLICT DO NOTHING), with the take-over only after a read
    // had found the row expired, spared the server about 2 us per cycle of
    // setting up the DO UPDATE, but made taking over a crashed holder's lock
    // three round trips instead of one. The holder, when there is one, is
    // read by `find` afterwards, on the path that is about to wait or give
    // up anyway.
    out.emplace_back(stmt::acquire, acquire_sql(target, AcquireLayer::turn));
    // The same behind a QueueGate: $5 the name waited for, $6 the ticket
    // before which live waiters go first. Checked after the turn is taken,
    // so against the line as it is when the row is written.
    auto nobody_ahead = [&](const std::string& name, const std::string& before) {
        return " AND NOT " + waiter_ahead(Q, name, before);
    };
    // Whoever takes the name leaves the line in the same statement, its
    // place being ticket `ticket` held by `waiter`, and wakes the live
    // waiter right behind it (as queue_leave does): the hand-off to the
    // next in line costs no round trip after the acquisition. `won` is the
    // acquiring INSERT's RETURNING; the caller reads `cols` from it.
    auto leaving_line = [&](const std::string& won, const std::string& cols,
                            const std::string& ticket, const std::string& waiter) {
        return ", won AS (" + won + "), left_line AS (DELETE FROM " + Q +
               " WHERE id = " + ticket + " AND waiter = " + waiter +
               " AND EXISTS (SELECT 1 FROM won) RETURNING id, lockstring)"
               " SELECT " + cols + ", (SELECT count(pg_notify(n.inbox, l.lockstring))"
               " FROM left_line AS l CROSS JOIN LATERAL (SELECT x.inbox FROM " +
               Q + " AS x WHERE x.lockstring = l.lockstring AND x.id > l.id"
               " AND x.expires > now() ORDER BY x.id LIMIT 1) AS n WHERE n.inbox <> '')"
               " FROM won";
    };
    // A caller without a place in line (it does not wait, or has not
    // joined yet): the same gate, as any live waiter at all, and nothing to
    // leave. The leaving CTE would make the INSERT's result a materialised
    // CTE read twice: measured, 15-20% of an uncontended cycle.
    // $5 the name waited for.
    out.emplace_back(stmt::acquire_gated, acquire_sql(target, AcquireLayer::queue_gate));
    out.emplace_back(stmt::acquire_queued,
        "WITH " + turn_cte(T) +
        leaving_line(upsert(T, "SELECT $1::text, now(), now() + " + millis("$2") +
                            ", $3::text FROM turn WHERE " + turn_taken("$4::text") +
                            nobody_ahead("$5::text", "$6::bigint"), "t.id, t.created"),
                     "id, created", "$6::bigint", "$3::text"));

    // $1 name, $2 capacity, $3 lease ms, $4 locked_by. The lowest free or
    // expired slot in one statement: (id, lockstring, created), in binary
    // format as acquire's, or
    // nothing when no slot was free or the free one was taken concurrently
    // (slot_holder tells which). Slot by slot, each an index probe, up to
    // the first free one: a recursive query, so that the order is the
    // query's and not a plan's. A join of generate_series with the table
    // under "ORDER BY n" was planned generically for 1000 slots and read
    // the whole table into a hash, a cost that grew with every other lock
    // in it (0.8x the raw statement once sequential scans were off, against
    // 1.0-1.6x now); without the ORDER BY, the lowest free slot would have
    // come first only as long as the planner chose a nested loop.
    auto slot_free = [&](const std::string& n) {
        return "NOT EXISTS (SELECT 1 FROM " + T + " AS x WHERE x.lockstring = $1::text || '#' || " +
               n + " AND x.expires > now())";
    };
    auto slot_sql = [&](const std::string& gate, bool leaves_line) {
        const std::string insert =
            upsert(T, "SELECT $1::text || '#' || cand.n, now(), now() + " + millis("$3") +
                      ", $4::text FROM turn, (SELECT n FROM probe WHERE free) AS cand WHERE " +
                      turn_taken("$1::text") + gate,
                   "t.id, t.lockstring::text, t.created");
        return "WITH RECURSIVE probe(n, free) AS (SELECT 1, " + slot_free("1") +
               " UNION ALL SELECT p.n + 1, " + slot_free("(p.n + 1)") +
               " FROM probe AS p WHERE NOT p.free AND p.n < $2::int), " + turn_cte(T) +
               (leaves_line ? leaving_line(insert, "id, lockstring, created", "$5::bigint",
                                           "$4::text")
                            : insert);
    };
    out.emplace_back(stmt::acquire_slot, slot_sql("", false));
    out.emplace_back(stmt::acquire_slot_gated,
        slot_sql(nobody_waiting(Q, "$1::text"), false));
    // $5 the ticket before which live waiters go first.
    out.emplace_back(stmt::acquire_slot_queued,
                     slot_sql(nobody_ahead("$1::text", "$5::bigint"), true));
    // clang-format on
}

// Lock sets' and shared holds' statements.
void set_and_shared_statements(const PgTarget& target, Entries& out) {
    const std::string& T = target.family.table().quoted;
    const std::string& Q = target.family.side(SideTable::queue).quoted;  // the queue table
    const std::string cols = columns("t");
    // clang-format off
    // A lock set. $1 the names (text[], distinct), $2 lease ms, $3
    // locked_by, $4 each name's turn name (text[], in the same order), $5
    // how many names. Our rows (id, lockstring, created), in binary format
    // as acquire's. Every name's turn is taken first, in one order (the
    // keys sorted), so two sets wait for each other's turns at most, as
    // two single locks do; then every row is inserted or taken over, its
    // id drawn after its turn and in the order of the names. Rows of a
    // name held live are left alone by the upsert's WHERE; when that left
    // any, the final SELECT fails the statement (an integer that is not
    // one), so that nothing of the set was ever written: its error names
    // itself, and the caller reads the holders. (A client's ROLLBACK would
    // cost two more round trips.) With `yield`, nothing is written either
    // while a live waiter is queued for one of the names, checked against
    // one snapshot for all of them.
    auto set_sql = [&](bool yield) {
        const std::string queue_clear =
            yield ? " AND NOT EXISTS (SELECT 1 FROM " + Q + " AS q"
                    " WHERE q.lockstring IN (SELECT k FROM names) AND q.expires > now())"
                  : "";
        return "WITH " + turn_cte(T) +
               ", names AS (SELECT x.n, x.k FROM unnest($1::text[], $4::text[]) AS x(n, k))"
               ", turns AS (SELECT count(" + turn_taken("s.k") + ") AS c"
               " FROM turn, (SELECT DISTINCT k FROM names ORDER BY k) AS s)"
               ", won(id, lockstring, created) AS (" +
               upsert(T, "SELECT names.n, now(), now() + " + millis("$2") + ", $3::text"
                         " FROM names, turns WHERE turns.c > 0" + queue_clear +
                         " ORDER BY names.n", "t.id, t.lockstring::text, t.created") +
               ") SELECT * FROM won WHERE CASE WHEN (SELECT count(*) FROM won) = $5::int"
               " THEN true ELSE ('" + std::string(set_partly_taken) +
               "' || (SELECT count(*) FROM won)::text)::int = 0 END";
    };
    out.emplace_back(stmt::acquire_set, set_sql(false));
    out.emplace_back(stmt::acquire_set_queued, set_sql(true));
    // A lock set with names held shared (Connection::try_acquire_mixed_set).
    // $1 the rows (text[]): each exclusive name; each shared name (its
    // marker) and its holder row. $2 lease ms, $3 locked_by, $4 each row's
    // turn name (a holder row takes its name's), $5 how many rows, $6
    // whether each row is a marker (boolean[]), $7 the markers' locked_by.
    // As set_sql, with one more way to win a row: a live marker met by a
    // marker is extended (as acquire_shared's upsert extends it), keeping
    // its id. Rows returned: every column, markers included.
    auto mixed_set_sql = [&](bool yield) {
        const std::string queue_clear =
            yield ? " AND NOT EXISTS (SELECT 1 FROM " + Q + " AS q"
                    " WHERE q.lockstring IN (SELECT k FROM rows) AND q.expires > now())"
                  : "";
        return "WITH " + turn_cte(T) +
               ", rows AS (SELECT x.n, x.k, CASE WHEN x.m THEN $7::text ELSE $3::text END AS o"
               " FROM unnest($1::text[], $4::text[], $6::boolean[]) AS x(n, k, m))"
               ", turns AS (SELECT count(" + turn_taken("s.k") + ") AS c"
               " FROM turn, (SELECT DISTINCT k FROM rows ORDER BY k) AS s)"
               ", won AS (INSERT INTO " + T + " AS t (lockstring, created, expires, locked_by)"
               " SELECT rows.n, now(), now() + " + millis("$2") + ", rows.o"
               " FROM rows, turns WHERE turns.c > 0" + queue_clear + " ORDER BY rows.n"
               " ON CONFLICT (lockstring) DO UPDATE SET"
               " id = CASE WHEN t.expires <= now() THEN excluded.id ELSE t.id END,"
               " created = CASE WHEN t.expires <= now() THEN excluded.created ELSE t.created END,"
               " expires = greatest(t.expires, excluded.expires), locked_by = excluded.locked_by"
               " WHERE t.expires <= now() OR (t.locked_by = $7::text AND excluded.locked_by = $7::text)"
               " RETURNING " + columns("t") + ")"
               " SELECT * FROM won WHERE CASE WHEN (SELECT count(*) FROM won) = $5::int"
               " THEN true ELSE ('" + std::string(set_partly_taken) +
               "' || (SELECT count(*) FROM won)::text)::int = 0 END";
    };
    out.emplace_back(stmt::acquire_mixed_set, mixed_set_sql(false));
    out.emplace_back(stmt::acquire_mixed_set_queued, mixed_set_sql(true));
    // A shared hold (Connection::try_acquire_shared). $1 name, $2 our row's
    // lockstring, $3 lease ms, $4 locked_by, $5 the marker's locked_by, $6
    // the name's turn name; _queued: $7 the ticket before which live waiters
    // go first. One statement, its turn taken in the marker's row source as
    // the exclusive acquire takes it: the marker is inserted, taken over when
    // expired (a new id) or extended when live, a live exclusive row left
    // alone; our row goes in only after it. Both upserts act on the latest
    // committed rows whatever the statement's snapshot, so nothing here needs
    // a snapshot taken after the turn (the release does: shared_release_sql).
    // Rows (kind, lock row) as shared_acquire_sql() describes.
    auto shared_sql = [&](bool queued) {
        const std::string waiting =
            queued ? waiter_ahead(Q, "$1::text", "$7::bigint") : "false";
        return "WITH " + turn_cte(T) + ", q AS (SELECT " + waiting + " AS queued),"
               " m AS (INSERT INTO " + T + " AS t (lockstring, created, expires, locked_by)"
               " SELECT $1::text, now(), now() + " + millis("$3") + ", $5::text FROM turn, q"
               " WHERE NOT q.queued AND " + turn_taken("$6::text") +
               " ON CONFLICT (lockstring) DO UPDATE SET"
               " id = CASE WHEN t.expires <= now() THEN excluded.id ELSE t.id END,"
               " created = CASE WHEN t.expires <= now() THEN excluded.created ELSE t.created END,"
               " expires = greatest(t.expires, excluded.expires), locked_by = excluded.locked_by"
               " WHERE t.expires <= now() OR t.locked_by = $5::text RETURNING t.id),"
               " o AS (INSERT INTO " + T + " AS t (lockstring, created, expires, locked_by)"
               " SELECT $2::text, now(), now() + " + millis("$3") + ", $4::text FROM m"
               " ON CONFLICT (lockstring) DO NOTHING RETURNING " + columns("t") + ")"
               " SELECT 'own', o.* FROM o"
               " UNION ALL SELECT 'mine', " + columns("h") + " FROM " + T + " AS h"
               " WHERE h.lockstring = $2::text AND EXISTS (SELECT 1 FROM m)"
               " AND NOT EXISTS (SELECT 1 FROM o)"
               " UNION ALL SELECT 'holder', " + columns("h") + " FROM " + T + " AS h"
               " WHERE h.lockstring = $1::text AND h.expires > now()"
               " AND h.locked_by IS DISTINCT FROM $5::text AND NOT EXISTS (SELECT 1 FROM m)"
               " UNION ALL SELECT 'queued', NULL, NULL, NULL, NULL, NULL, NULL FROM q WHERE q.queued";
    };
    out.emplace_back(stmt::acquire_shared, shared_sql(false));
    out.emplace_back(stmt::acquire_shared_queued, shared_sql(true));
    // The work of a shared release (shared_release_sql), run by EXECUTE
    // after the turn in the same simple query (shared_release_execute_sql):
    // planned once per session instead of on every release. $1 id, $2
    // locked_by, $3 min_hold ms, $4 name, $5 the marker's locked_by, $6
    // shared_prefix(name), $7 turn name, $8 its channel.
    {
        SharedValues p;
        p.id = "$1::bigint";
        p.locked_by = "$2::text";
        p.min_hold_ms = "$3::bigint";
        p.name = "$4::text";
        p.marker = "$5::text";
        p.prefix = "$6::text";
        p.turn = "$7::text";
        p.channel = "$8::text";
        out.emplace_back(stmt::release_shared, shared_release_work(target, p));
    }
    // The work of a shared renewal (shared_renew_sql), the same way through
    // a transaction pooler (PgConnection::renew_shared). $1 id, $2
    // locked_by, $3 lease ms, $4 name, $5 the marker's locked_by.
    {
        SharedValues p;
        p.id = "$1::bigint";
        p.locked_by = "$2::text";
        p.lease_ms = "$3";
        p.name = "$4::text";
        p.marker = "$5::text";
        out.emplace_back(stmt::renew_shared, shared_renew_work(target, p));
    }
    // clang-format on
}

// Renewal, release, reads, the reaper's and the history's statements.
void release_and_admin_statements(const PgTarget& target, Entries& out) {
    const std::string& T = target.family.table().quoted;
    const std::string cols = columns("t");
    auto notify = [&](const std::string& turn, const std::string& channel) {
        return notify_sql(T, turn, channel);
    };
    // clang-format off
    // $1 the names (text[]). Those held live, by name.
    out.emplace_back(stmt::set_holders,
        "SELECT " + cols + " FROM " + T + " AS t WHERE t.lockstring = ANY ($1::text[])"
        " AND t.expires > now() ORDER BY t.lockstring COLLATE \"C\"");
    // $1 ids (bigint[]), $2 locked_by, $3 lease ms. The rows renewed.
    out.emplace_back(stmt::renew_set,
        "UPDATE " + T + " AS t SET expires = now() + " + millis("$3") +
        " WHERE t.id = ANY ($1::bigint[]) AND t.locked_by = $2::text AND t.expires > now()"
        " RETURNING " + cols);
    // $1 ids (bigint[]), $2 locked_by, $3 each id's turn name (text[], in
    // the same order), $4 each one's channel. Deletes the rows that are
    // ours and tells the listeners of each name, as delete_exact does. One
    // row: how many were deleted.
    out.emplace_back(stmt::release_set,
        "WITH d AS (DELETE FROM " + T + " WHERE id = ANY ($1::bigint[])"
        " AND coalesce(locked_by, '') = $2::text RETURNING id, lockstring)"
        ", w AS (SELECT x.k, x.ch, d.lockstring FROM unnest($1::bigint[], $3::text[], $4::text[])"
        " AS x(id, k, ch) JOIN d ON d.id = x.id)"
        " SELECT count(*), count(CASE WHEN pg_try_advisory_xact_lock(" + waiting_key(T, "w.k") +
        ") THEN NULL ELSE pg_notify(w.ch, w.lockstring) END) FROM w");

    // $1 name, $2 ticket.
    out.emplace_back(stmt::waiters_ahead,
        "SELECT " + waiter_ahead(target.family.side(SideTable::queue).quoted, "$1::text",
                                 "$2::bigint"));

    // $1 name, $2 capacity. When every slot is held: the one that frees
    // first. Nothing when a slot is free (or expired): try again. One index
    // probe per slot (LATERAL ... LIMIT 1 cannot become a hash join over
    // the whole table).
    out.emplace_back(stmt::slot_holder,
        "WITH live AS (SELECT x.* FROM generate_series(1, $2::int) AS g(n), LATERAL"
        " (SELECT * FROM " + T + " AS y WHERE y.lockstring = $1::text || '#' || g.n"
        " AND y.expires > now() LIMIT 1) AS x)"
        " SELECT " + cols + " FROM live AS t WHERE (SELECT count(*) FROM live) >= $2::int"
        " ORDER BY t.expires LIMIT 1");

    // $1 id, $2 locked_by, $3 min_hold ms, $4 turn name, $5 its channel. Keeps the row
    // until created + min_hold while that is still ahead, else deletes it;
    // either way tells the listeners (a kept row has a nearer expiry for waiters to re-read).
    // The two modifications touch disjoint rows (keep or not keep), so the
    // statement never modifies a row twice. No row: the lock was not ours.
    out.emplace_back(stmt::release,
        "WITH r AS (SELECT id, ($3::bigint > 0 AND created + " + millis("$3") + " > now()) AS keep"
            " FROM " + T + " WHERE id = $1::bigint AND coalesce(locked_by, '') = $2::text)"
        ", k AS (UPDATE " + T + " AS t SET expires = t.created + " + millis("$3") +
            " FROM r WHERE t.id = r.id AND r.keep RETURNING t.lockstring)"
        ", d AS (DELETE FROM " + T + " AS t USING r WHERE t.id = r.id AND NOT r.keep"
            " RETURNING t.lockstring)"
        " SELECT true, " + notify("$4::text", "$5::text") + " FROM k UNION ALL SELECT false, " +
            notify("$4::text", "$5::text") + " FROM d");

    // $1 id, $2 locked_by, $3 lease ms.
    out.emplace_back(stmt::renew,
        "UPDATE " + T + " AS t SET expires = now() + " + millis("$3") +
        " WHERE t.id = $1::bigint AND t.locked_by = $2::text AND t.expires > now()"
        " RETURNING " + cols);

    // $1 id, $2 locked_by, $3 turn name, $4 its channel. Deleting frees the
    // lock: tell the listeners.
    out.emplace_back(stmt::delete_exact,
        "DELETE FROM " + T + " WHERE id = $1::bigint AND coalesce(locked_by, '') = $2::text"
        " RETURNING " + notify("$3::text", "$4::text"));

    // clang-format on
}

}  // namespace

std::map<std::string, Statement> statements(const PgTarget& target) {
    Entries out;
    acquire_statements(target, out);
    set_and_shared_statements(target, out);
    release_and_admin_statements(target, out);
    std::map<std::string, Statement> by_key;
    for (auto& [key, sql] : out) {
        std::string name = key + "/" + text_hash(sql);
        by_key.emplace(key, Statement{std::move(name), std::move(sql)});
    }
    return by_key;
}

std::string prepared_name(Query key, const std::string& sql) {
    return std::string("sqlock_") + query_name(key) + "/" + text_hash(sql);
}

std::shared_ptr<const CoreStatements> core_statements(const PgTarget& target) {
    CoreStatements out{statement_set(target), {}};
    for (std::size_t i = 0; i < query_count; ++i) {
        const auto key = static_cast<Query>(i);
        const QueryText& text = out.set[key];
        if (text.mode == QueryText::Mode::transaction)
            throw error(errc::backend, std::string("the PostgreSQL statement for '") +
                                           query_name(key) +
                                           "' asks for a transaction, which PostgreSQL's "
                                           "statements do not take: make it one statement");
        if (text.mode != QueryText::Mode::unprepared)
            out.prepared[i] = prepared_name(key, text.sql);
    }
    return std::make_shared<const CoreStatements>(std::move(out));
}

namespace {

// The side tables, the clock, the run history and the pauses.
void history_and_pause_queries(const PgTarget& target, StatementSet& set) {
    const std::string& T = target.family.table().quoted;
    const std::string& R = target.family.side(SideTable::runs).quoted;
    using Mode = QueryText::Mode;
    // clang-format off

    // Every side table in one round trip, once or twice per connection:
    // sent with its text. The names are validated identifier text: safe in
    // a literal.
    set.add(Query::side_tables, side_tables_sql(target), Mode::unprepared);

    // Pauses. P is the pauses table; a pause is in force while live.
    const std::string& P = target.family.side(SideTable::pauses).quoted;
    const std::string pause_live = "(paused_until IS NULL OR paused_until > now())";
    const std::string pause_cols = "name::text, paused_by::text, reason::text, " +
        utc("created") + ", " + utc("paused_until");

    set.add(Query::now_millis, "SELECT floor(extract(epoch FROM now()) * 1000)::bigint");

    // $1 name, $2 window start (UTC text, NULL for none), $3 host, $4 pid,
    // $5 user, $6 program, $7 fencing id.
    const std::string run_columns =
        " (name, window_start, host, pid, username, program, fencing_id, started, outcome) ";
    const std::string run_values = "$1::text, " + utc_param("NULLIF($2::text, '')") +
        ", $3::text, $4::bigint, $5::text, $6::text, $7::bigint, now(), 'running'";
    set.add(Query::start_run,
        "INSERT INTO " + R + run_columns + "VALUES (" + run_values + ") RETURNING id");

    // The same parameters. The pause in force, read in the statement that
    // inserts the run only when there is none: one round trip for `sqlock
    // run`'s "is it paused?" and "record the start". Both parts see one
    // snapshot, so a pause is either seen or later than the run. Run about
    // once per connection (a `sqlock run` connects anew), so it is sent with
    // its text: one round trip, not a PREPARE and an execution.
    set.add(Query::start_run_unless_paused,
        "WITH p(name, paused_by, reason, created, until) AS (SELECT " + pause_cols + " FROM " +
            P + " WHERE name = $1::text AND " + pause_live + ")"
        ", r AS (INSERT INTO " + R + run_columns + "SELECT " + run_values +
            " WHERE NOT EXISTS (SELECT 1 FROM p) RETURNING id)"
        " SELECT (SELECT id FROM r), p.name, p.paused_by, p.reason, p.created, p.until"
        " FROM (SELECT 1) AS one LEFT JOIN p ON true", Mode::unprepared);

    // $1 run id, $2 fencing id, $3 locked_by, $4 exit status, $5 signal
    // (NULL: none), $6 outcome. The lock row is locked FOR UPDATE while the
    // end is written: a take-over of an expiring lease waits for us, and
    // then its holder's once-per decision sees this record. Run once per
    // `sqlock run`, on the connection it made: sent with its text, so that
    // no PREPARE's round trip comes just before the release. Only a run of
    // this lock row, and not while the row has another holder: after a
    // crash failover lost the last ids, a stale holder's (run id, fencing
    // id) can name a new holder's run.
    set.add(Query::finish_run,
        "WITH l AS (SELECT id FROM " + T + " WHERE id = $2::bigint AND locked_by = $3::text"
            " AND expires > now() FOR UPDATE)"
        " UPDATE " + R + " AS r SET ended = now(), exit_status = $4::int,"
        " exit_signal = $5::int,"
        " outcome = CASE WHEN EXISTS (SELECT 1 FROM l) THEN $6::text ELSE 'lost' END"
        " WHERE r.id = $1::bigint AND r.fencing_id = $2::bigint AND r.outcome = 'running'"
        " AND NOT EXISTS (SELECT 1 FROM " + T + " WHERE id = $2::bigint"
            " AND coalesce(locked_by, '') <> $3::text)"
        " RETURNING r.outcome::text",
        Mode::unprepared);

    // $1 run id, $2 fencing id, $3 locked_by: the end recorded, while the
    // lock row is ours.
    set.add(Query::finished_run,
        "SELECT r.outcome::text FROM " + R + " AS r WHERE r.id = $1::bigint"
        " AND r.fencing_id = $2::bigint AND r.outcome <> 'running' AND EXISTS (SELECT 1 FROM " +
        T + " WHERE id = $2::bigint AND locked_by = $3::text)", Mode::unprepared);

    // $1 name, $2 window start (UTC text).
    set.add(Query::window_runs,
        runs_select(target, "r.name = $1::text AND r.window_start = " + utc_param("$2") +
                    " AND r.started >= " + utc_param("$2"), "r.started, r.id"));

    // $1 since (ms; NULL: every run, whatever its start says), $2 limit
    // [, $3 name].
    const std::string since = "($1::bigint IS NULL OR r.started >= now() - " + millis("$1") + ")";
    set.add(Query::history_all,
        runs_select(target, since, "r.started DESC, r.id DESC LIMIT $2::bigint"));
    set.add(Query::history_name,
        runs_select(target, "r.name = $3::text AND " + since,
                    "r.started DESC, r.id DESC LIMIT $2::bigint"));

    // $1 name.
    set.add(Query::last_success,
        runs_select(target, "r.name = $1::text AND r.outcome = 'succeeded'",
                    "r.started DESC, r.id DESC LIMIT 1"));

    set.add(Query::run_counts,
        "SELECT r.name::text, CASE WHEN r.outcome <> 'running' THEN r.outcome::text"
        " WHEN l.expires > now() THEN 'running' ELSE 'lost' END, count(*)"
        " FROM " + R + " AS r LEFT JOIN " + T + " AS l ON l.id = r.fencing_id"
        " GROUP BY 1, 2 ORDER BY 1, 2");
    // The lock rows. starts_with compares the prefix literally (no LIKE
    // wildcards); COLLATE "C" orders by bytes, as SQLite does, whatever the
    // database's collation. expired_only comes as 1 or 0, which boolean
    // reads.
    set.add(Query::lock_row,
        "SELECT " + columns("t") + " FROM " + T + " AS t WHERE t.lockstring = $1::text");
    set.add(Query::lock_rows,
        "SELECT " + columns("t") + " FROM " + T + " AS t"
        " WHERE ($1::text = '' OR starts_with(t.lockstring, $1::text))"
        " AND (NOT $2::boolean OR t.expires <= now())"
        " ORDER BY t.lockstring COLLATE \"C\"");
    set.add(Query::lock_held,
        "SELECT 1 FROM " + T +
        " WHERE id = $1::bigint AND locked_by = $2::text AND expires > now()");
    set.add(Query::lock_counts,
        "SELECT count(*) FILTER (WHERE expires > now()), count(*) FROM " + T);
    // $1 batch size. With the run history, the runs of the rows deleted
    // end with their lease, in the same statement.
    const std::string expired_batch =
        "DELETE FROM " + T + " WHERE " +
        in_batch("id", "SELECT id FROM " + T + " WHERE expires <= now() LIMIT $1::bigint") +
        " AND expires <= now() RETURNING id, expires";
    set.add(Query::purge_locks,
        "WITH d AS (" + expired_batch + ") SELECT count(*) FROM d");
    set.add(Query::purge_locks_and_runs,
        "WITH d AS (" + expired_batch + ")"
        ", u AS (UPDATE " + R + " AS r SET outcome = 'lost', ended = d.expires FROM d"
            " WHERE r.fencing_id = d.id AND r.outcome = 'running')"
        " SELECT count(*) FROM d");

    // $1 retention (ms), $2 batch size. count_runs counts the same runs.
    // --once-per runs are kept while their window may still be current
    // (windows are at most 366 days): pruning the run that did the window
    // would let its job run again in it.
    const std::string prunable =
        "r.started < now() - " + millis("$1") + " AND NOT (r.outcome = 'running' AND"
        " EXISTS (SELECT 1 FROM " + T + " AS l WHERE l.id = r.fencing_id AND l.expires > now()))"
        " AND (r.window_start IS NULL OR r.window_start < now() - interval '366 days')";
    set.add(Query::prune_runs,
        "DELETE FROM " + R + " WHERE " +
        in_batch("id", "SELECT r.id FROM " + R + " AS r WHERE " + prunable + " LIMIT $2::bigint"));
    set.add(Query::count_runs,
        "SELECT count(*) FROM " + R + " AS r WHERE " + prunable);

    // $1 name, $2 paused_by, $3 reason, $4 for (ms, NULL: until resumed).
    set.add(Query::pause,
        "INSERT INTO " + P + " AS p (name, paused_by, reason, created, paused_until)"
        " VALUES ($1::text, $2::text, $3::text, now(), CASE WHEN $4::bigint IS NULL THEN NULL"
        " ELSE now() + " + millis("$4") + " END) ON CONFLICT (name) DO UPDATE SET"
        " paused_by = excluded.paused_by, reason = excluded.reason,"
        " created = excluded.created, paused_until = excluded.paused_until RETURNING " +
        pause_cols);

    // $1 name.
    set.add(Query::resume,
        "DELETE FROM " + P + " WHERE name = $1::text RETURNING " + pause_live);
    // `sqlock run` reads it alone about once per connection (when it cannot
    // start its run with start_run_unless_paused): sent with its text.
    set.add(Query::paused,
        "SELECT " + pause_cols + " FROM " + P + " WHERE name = $1::text AND " + pause_live,
        Mode::unprepared);
    set.add(Query::pauses,
        "SELECT " + pause_cols + " FROM " + P + " WHERE " + pause_live +
        " ORDER BY name COLLATE \"C\"");

    // $1 batch size (in_batch()): a pause renewed since the subquery saw it
    // stays; two reapers at once each delete a row at most once between them.
    const std::string pause_ended = "paused_until <= now()";
    set.add(Query::purge_pauses,
        "DELETE FROM " + P + " WHERE " +
        in_batch("name", "SELECT name FROM " + P + " WHERE " + pause_ended + " LIMIT $1::bigint") +
        " AND " + pause_ended);
    set.add(Query::count_pauses,
        "SELECT count(*) FROM " + P + " WHERE " + pause_ended);

    // clang-format on
}

// The waiting line, the leaders, `sqlock run --after` and `sqlock metrics`.
void queue_leader_and_metrics_queries(const PgTarget& target, StatementSet& set) {
    const std::string& T = target.family.table().quoted;
    const std::string& R = target.family.side(SideTable::runs).quoted;
    using Mode = QueryText::Mode;
    // clang-format off
    // The queue of waiters. Q is the queue table.
    const std::string& Q = target.family.side(SideTable::queue).quoted;
    // $1 name, $2 waiter, $3 inbox, $4 lease ms. The data-modifying CTE runs
    // although nothing reads it: the name's expired rows go in the same
    // statement.
    // Both answer, besides the place's ticket or whether it is still held,
    // the live waiters ahead and in how many ms the first of their places
    // lapses unless renewed (-1: nobody ahead): a waiter looks again then,
    // so a waiter ahead that died or was cut off stalls the line no longer
    // than its place's lease.
    auto ahead = [&](const std::string& name, const std::string& ticket) {
        return "(SELECT count(*) FROM " + Q + " AS x WHERE x.lockstring = " + name +
               " AND x.id < " + ticket + " AND x.expires > now()), coalesce((SELECT"
               " (extract(epoch FROM min(x.expires) - now()) * 1000)::bigint FROM " + Q +
               " AS x WHERE x.lockstring = " + name + " AND x.id < " + ticket +
               " AND x.expires > now()), -1)";
    };
    set.add(Query::queue_join,
        "WITH gone AS (DELETE FROM " + Q + " WHERE lockstring = $1::text AND expires <= now()),"
        " ins AS (INSERT INTO " + Q + " (lockstring, waiter, inbox, expires)"
        " VALUES ($1::text, $2::text, $3::text, now() + " + millis("$4") + ") RETURNING id)"
        " SELECT ins.id, " + ahead("$1::text", "ins.id") + " FROM ins");
    // $1 ticket, $2 waiter, $3 lease ms, $4 name.
    set.add(Query::queue_poll,
        "WITH u AS (UPDATE " + Q + " SET expires = now() + " + millis("$3") +
        " WHERE id = $1::bigint AND waiter = $2::text AND expires > now() RETURNING id)"
        " SELECT (SELECT count(*) FROM u), " + ahead("$4::text", "$1::bigint"));
    // $1 ticket, $2 waiter. The live waiter right behind wakes: it may be
    // first in line now. Only that one: the rest have not moved up to the
    // front, so waking them would only cost each a round trip.
    set.add(Query::queue_leave,
        "WITH d AS (DELETE FROM " + Q + " WHERE id = $1::bigint AND waiter = $2::text"
        " RETURNING id, lockstring)"
        " SELECT pg_notify(n.inbox, d.lockstring) FROM d CROSS JOIN LATERAL"
        " (SELECT x.inbox FROM " + Q + " AS x WHERE x.lockstring = d.lockstring AND x.id > d.id"
        " AND x.expires > now() ORDER BY x.id LIMIT 1) AS n WHERE n.inbox <> ''");
    set.add(Query::queue_length,
        "SELECT count(*) FROM " + Q + " WHERE lockstring = $1::text AND expires > now()");

    // Leaders' values. The table's own channel tells every listener of
    // this table (observers, and release hubs, to which "name#leader" is
    // a lockstring nobody waits for); the channel is a validated
    // identifier, safe in a literal.
    const std::string& D = target.family.side(SideTable::leaders).quoted;
    set.add(Query::proclaim,
        "WITH up AS (INSERT INTO " + D + " AS d (name, fencing_id, value, proclaimed)"
        " SELECT $1::text, $2::bigint, $4::text, now() FROM " + T +
        " WHERE id = $2::bigint AND lockstring = $1::text AND locked_by = $3::text"
        " AND expires > now()"
        " ON CONFLICT (name) DO UPDATE SET fencing_id = EXCLUDED.fencing_id,"
        " value = EXCLUDED.value, proclaimed = EXCLUDED.proclaimed"
        " WHERE d.fencing_id <= EXCLUDED.fencing_id RETURNING 1)"
        " SELECT count(*) FROM (SELECT pg_notify('" + target.channel + "', $1::text || '#leader')"
        " FROM up) AS told");
    set.add(Query::leader,
        "SELECT " + columns("t") + ", d.value FROM " + T + " AS t LEFT JOIN " + D +
        " AS d ON d.name = t.lockstring AND d.fencing_id = t.id WHERE t.lockstring = $1::text");

    // `sqlock run --after`: the runs that ran, the skips, a skip recorded
    // ($1 name ... $7 fencing id as for start_run, $8 the outcome).
    const std::string skipped = skipped_outcomes_sql;
    set.add(Query::recent_runs,
        runs_select(target, "r.name = $2::text AND r.outcome NOT IN " + skipped,
                    "r.started DESC, r.id DESC LIMIT $1::bigint"));
    set.add(Query::last_skip,
        runs_select(target, "r.name = $1::text AND r.outcome IN " + skipped,
                    "r.started DESC, r.id DESC LIMIT 1"));
    set.add(Query::skip_run,
        "INSERT INTO " + R + " (name, window_start, host, pid, username, program, fencing_id,"
        " started, ended, outcome) VALUES ($1::text, " + utc_param("NULLIF($2::text, '')") +
        ", $3::text, $4::bigint, $5::text, $6::text, $7::bigint, now(), now(), $8::text)"
        " RETURNING id", Mode::unprepared);

    // `sqlock metrics`: the live rows, the lines, the elections.
    set.add(Query::live_locks,
        "SELECT lockstring::text, id, (round(extract(epoch FROM now() - created) * 1000) /"
        " 1000)::float8, (round(extract(epoch FROM expires - now()) * 1000) / 1000)::float8"
        " FROM " + T + " WHERE expires > now() ORDER BY lockstring", Mode::unprepared);
    set.add(Query::queue_lengths,
        "SELECT lockstring::text, count(*) FROM " + Q + " WHERE expires > now()"
        " GROUP BY lockstring ORDER BY lockstring", Mode::unprepared);
    set.add(Query::leader_names, "SELECT name::text FROM " + D + " ORDER BY name",
        Mode::unprepared);
    set.add(Query::queue_joined,
        "SELECT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass('" + Q +
        "') AND attname = 'joined' AND NOT attisdropped)", Mode::unprepared);
    set.add(Query::queue_waits,
        "SELECT lockstring::text, count(*), (round(extract(epoch FROM now() - min(joined)) *"
        " 1000) / 1000)::float8 FROM " + Q + " WHERE expires > now()"
        " GROUP BY lockstring ORDER BY lockstring", Mode::unprepared);

    // clang-format on
}

}  // namespace

StatementSet statement_set(const PgTarget& target) {
    StatementSet set("PostgreSQL");
    history_and_pause_queries(target, set);
    queue_leader_and_metrics_queries(target, set);
    return set;
}

std::string schema_script(const PgTarget& target) {
    return target.family.fill(postgres_schema_sql);
}

std::string schema_complete_sql(const PgTarget& target) {
    const std::size_t tables = 2 + target.family.sides().size();
    std::string sql = "SELECT";
    for (std::size_t i = 1; i <= tables; ++i)
        sql += " to_regclass($" + std::to_string(i) + ") IS NOT NULL AND";
    return sql + " to_regprocedure($" + std::to_string(tables + 1) + ") IS NOT NULL";
}

std::vector<std::string> schema_complete_params(const PgTarget& target) {
    std::vector<std::string> params = {target.family.table().quoted, target.family.index().quoted};
    for (SideTable side : target.family.sides()) params.push_back(target.family.side(side).quoted);
    params.push_back(target.family.guard().quoted + "(bigint,text,text,text)");
    return params;
}

}  // namespace sqlock::detail::postgres
