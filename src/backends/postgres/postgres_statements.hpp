// The SQL of the PostgreSQL backend, one prepared statement per operation.
//
// Every statement is a single autocommit statement, so each operation is one
// round trip and one short transaction, and every one works through a pooler
// in transaction or statement mode (kept on the server sessions there, see
// PgConnection). Times are the server's:
// now() and column arithmetic only; leases travel as milliseconds ($n::bigint).
//
// Result columns of a lock row, in this order (see read_row()):
//   id, lockstring, created, expires, locked_by, seconds_left
// with created/expires as UTC text "YYYY-MM-DD HH:MM:SS.mmm" and seconds_left
// to the millisecond, as the SQLite backend reports them (rounded up, so that
// seconds_left > 0 exactly when expires > now()).
#pragma once

#include <array>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "contract/statement_set.hpp"
#include "postgres_target.hpp"

namespace sqlock::detail::postgres {

/// Keys of the lock's own statements (the hot path and the reads of rows),
/// which PgConnection runs itself. The core's statements are in
/// statement_set().
namespace stmt {
constexpr const char* acquire = "sqlock_acquire";
constexpr const char* acquire_slot = "sqlock_acquire_slot";
/// acquire and acquire_slot behind a QueueGate: they refer to the queue
/// table, so they are prepared only once a connection knows it exists.
/// _gated: for a caller without a place in line (every live waiter goes
/// first); _queued: for the holder of a ticket, leaving the line as it
/// takes the name.
constexpr const char* acquire_gated = "sqlock_acquire_gated";
constexpr const char* acquire_slot_gated = "sqlock_acquire_slot_gated";
constexpr const char* acquire_queued = "sqlock_acquire_queued";
constexpr const char* acquire_slot_queued = "sqlock_acquire_slot_queued";
/// A lock set, all rows or none; behind the queue (yielding to every live
/// waiter of its names) in the _queued form.
constexpr const char* acquire_set = "sqlock_acquire_set";
constexpr const char* acquire_set_queued = "sqlock_acquire_set_queued";
/// A lock set with names held shared, all rows or none.
constexpr const char* acquire_mixed_set = "sqlock_acquire_mixed_set";
constexpr const char* acquire_mixed_set_queued = "sqlock_acquire_mixed_set_queued";
/// A shared hold: the marker, then our row (try_acquire_shared); behind
/// the queue in the _queued form.
constexpr const char* acquire_shared = "sqlock_acquire_shared";
constexpr const char* acquire_shared_queued = "sqlock_acquire_shared_queued";
/// A shared release's work after its turn (shared_release_execute_sql).
constexpr const char* release_shared = "sqlock_release_shared";
/// A shared renewal's work after its turn (shared_renew_work), kept on
/// the server session through a transaction pooler.
constexpr const char* renew_shared = "sqlock_renew_shared";
/// The live rows among a set's names.
constexpr const char* set_holders = "sqlock_set_holders";
constexpr const char* renew_set = "sqlock_renew_set";
constexpr const char* release_set = "sqlock_release_set";
/// Whether a live waiter queued before a ticket is in a name's line.
constexpr const char* waiters_ahead = "sqlock_waiters_ahead";
constexpr const char* slot_holder = "sqlock_slot_holder";
constexpr const char* release = "sqlock_release";
constexpr const char* renew = "sqlock_renew";
constexpr const char* delete_exact = "sqlock_delete_exact";
}  // namespace stmt

/// What the error of acquire_set says when the set could be taken only in
/// part, and the statement therefore failed (22P02) and wrote nothing.
constexpr const char* set_partly_taken = "sqlock: a lock set taken in part: ";

/// One statement. `name` is what it is prepared as on the server: its key,
/// '/', and a hash of its SQL. Through a pooler, one server session serves
/// many clients (other tables, other sqlock versions); a name that stands
/// for one SQL text means that a statement found prepared under it is the
/// one we meant, never another table's.
struct Statement {
    std::string name;
    std::string sql;
};

/// The name a lockstring's advisory lock is keyed on: the lockstring
/// without a trailing "#N" (N one or more ASCII digits), so that a
/// semaphore's slots share their semaphore's key.
std::string turn_name(const std::string& lockstring);

/// The values of a shared hold's statements, each an SQL literal the
/// caller quoted (text) or wrote (numbers).
struct SharedValues {
    std::string name;       // the name held shared (the marker's lockstring)
    std::string turn;       // its turn_name()
    std::string locked_by;  // this holder's
    std::string marker;     // shared_marker_owner
    std::string lease_ms;   // the lease, whole milliseconds
    std::string id;         // this holder's row id (renew, release)
    std::string min_hold_ms;
    std::string prefix;   // shared_prefix(name) (release)
    std::string channel;  // name_channel() of the name (release)
};

/// The renewal and release of a shared hold: each one simple query of two
/// statements, sent as it is (values spliced in as literals, for the simple
/// protocol takes no parameters). The first takes the name's turn, the
/// advisory lock every acquisition of the name takes; the second does the
/// work in a snapshot taken after that, so it sees what every earlier turn
/// committed (the release counts the other holders, which a snapshot taken
/// before the turn could miss). Both run as one implicit transaction, which
/// holds the turn until it ends, also through a pooler in transaction mode.
///
/// renew: our row as renewed, or nothing when it or the marker is gone.
std::string shared_renew_sql(const PgTarget& target, const SharedValues& v);
/// release: one row (rows kept by min_hold, rows deleted).
std::string shared_release_sql(const PgTarget& target, const SharedValues& v);
/// The same, its second statement an EXECUTE of `prepared`, the session's
/// prepared stmt::release_shared, with the values of `v`: the same work,
/// planned once per session.
std::string shared_release_execute_sql(const PgTarget& target, const SharedValues& v,
                                       const std::string& prepared);
/// The parts of those: the first statement (the name's turn), each one's
/// work (the second statement; stmt::renew_shared and stmt::release_shared
/// are the same with parameters), and the arguments of an EXECUTE of those
/// with the values of `v` ("(...)").
std::string shared_turn_sql(const PgTarget& target, const SharedValues& v);
std::string shared_renew_work(const PgTarget& target, const SharedValues& v);
std::string shared_renew_arguments(const SharedValues& v);
std::string shared_release_arguments(const SharedValues& v);

/// The values of a mixed lock set's renewal and release, each a literal
/// (ids and the lease as digits).
struct MixedSetValues {
    std::vector<std::string> ids;           // every row of the set
    std::vector<std::string> turns;         // the shared names' turn names
    std::vector<std::string> shared_names;  // the shared names ...
    std::vector<std::string> prefixes;      // ... their shared_prefix()
    std::vector<std::string> shared_ids;    // ... and our holder rows' ids
    std::vector<std::string> names;         // every name, to wake its waiters
    std::vector<std::string> name_turns;    // ... its turn name
    std::vector<std::string> channels;      // ... its name_channel()
    std::string locked_by;
    std::string marker;
    std::string lease_ms;  // the renewal's
};

/// The renewal of a lock set with names held shared, as shared_renew_sql:
/// the shared names' turns, then every row renewed, a holder row only while
/// its marker is live, and each such marker extended to cover it. Rows: the
/// rows renewed.
std::string mixed_set_renew_sql(const PgTarget& target, const MixedSetValues& v);

/// The release of a lock set with names held shared, as shared_release_sql:
/// the shared names' turns, then the work. One row: (rows deleted, waiters
/// told, markers shrunk).
std::string mixed_set_release_sql(const PgTarget& target, const MixedSetValues& v);

/// The channel a release of `turn` (turn_name()) in `target`'s table
/// notifies: "sqlock_n_" and a hash of both, so that only the sessions whose
/// waiters watch that name hear it.
std::string name_channel(const PgTarget& target, const std::string& turn);

/// What a listening session runs to say that it waits for the name $1
/// (`on`), or no longer does: a session-level shared advisory lock, which a
/// release finds taken and then notifies. One per name and session; it ends
/// with the session, so a waiter that crashed leaves nothing behind.
std::string waiting_sql(const PgTarget& target, bool on);

/// The acquisition of one name as stmt::acquire and stmt::acquire_gated
/// write it, one of sqlock's guarantees at a time, each on top of the ones
/// before (what sqlock-bench prices alone):
///   take_over   the insert, which takes over an expired row with a new id
///   turn        the name's turn taken before the id is drawn, so that ids
///               grow in the order holders get the name (stmt::acquire)
///   queue_gate  no row while a live waiter is queued (stmt::acquire_gated)
/// Parameters: $1 lockstring, $2 lease ms, $3 locked_by, then with the turn
/// $4 its turn_name(), with the gate $5 the name waited for. Rows: our new
/// row's (id, created), or none.
enum class AcquireLayer { take_over, turn, queue_gate };
std::string acquire_sql(const PgTarget& target, AcquireLayer up_to);

/// The lock's own statements for `target`'s table, by key (stmt::...).
std::map<std::string, Statement> statements(const PgTarget& target);

/// The core's statements (statement_set.hpp) for `target`'s table. Each is
/// prepared as "sqlock_<query_name>/<hash of its SQL>", but for those marked
/// unprepared.
StatementSet statement_set(const PgTarget& target);

/// What `set`'s `key` is prepared as on the server (see Statement).
std::string prepared_name(Query key, const std::string& sql);

/// The core's statements as PgConnection runs them: the set, and the name
/// each is prepared as ("" for one sent unprepared). Built once per target
/// and shared by its connections.
struct CoreStatements {
    StatementSet set;
    std::array<std::string, query_count> prepared;
};

/// statement_set(target) with its prepared names. Throws errc::backend for
/// a statement in a mode PgConnection does not run (a transaction: each
/// of its statements is one statement, atomic by itself).
std::shared_ptr<const CoreStatements> core_statements(const PgTarget& target);

/// The schema script (sql/postgres/schema.sql) for `target`'s table.
std::string schema_script(const PgTarget& target);

/// Whether the whole family of `target`'s table exists: the table, its
/// index, every side table it makes and the guard function. The SQL, whose
/// text parameters schema_complete_params() gives (regclass text, the
/// guard's as regprocedure text).
std::string schema_complete_sql(const PgTarget& target);
std::vector<std::string> schema_complete_params(const PgTarget& target);

/// For a queue (regclass text $1) that exists: whether it has its joined
/// column, and whether this role may add it (owns the table, or is a
/// member of the role that does).
constexpr const char* queue_upgrade_check_sql =
    "SELECT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = c.oid AND attname = 'joined' "
    "AND NOT attisdropped), pg_has_role(c.relowner, 'USAGE') FROM pg_class c "
    "WHERE c.oid = to_regclass($1)";

}  // namespace sqlock::detail::postgres
