// The core's statements: what run history, once-per windows, pauses and
// counts ask of a database, written once in the core over one narrow call,
// Connection::query(). Each backend supplies the SQL of every key below, in
// its dialect, as data: a StatementSet built in its <backend>_statements.cpp.
// A feature that needs SQL is then one core file plus one entry per set.
//
// The contract of each key is its parameters (bound as ?1, $1, ... in the
// order listed) and its result columns (in the order listed). Results are
// text, NULL as no value; the core decodes them (records.hpp). Booleans may
// come as 1/0 or t/f. Times are UTC text "YYYY-MM-DD HH:MM:SS.mmm" from the
// database's clock, never the client's.
//
// Thread safety: a StatementSet is immutable once built; share it freely.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sqlock/duration.hpp"

namespace sqlock::detail {

/// The attempt column of a run `alias` among `runs`: the runs of one hold
/// of a lock share its fencing id (a lock row's id is never reused), so a
/// run's attempt is the number of runs of its name and fencing id up to
/// and including it, by id. Standard SQL, the same on every backend.
inline std::string run_attempt_column(const std::string& runs, const std::string& alias) {
    return "(SELECT COUNT(*) FROM " + runs + " AS a WHERE a.fencing_id = " + alias +
           ".fencing_id AND a.name = " + alias + ".name AND a.id <= " + alias + ".id)";
}

/// The core's statements. A run is read with the columns
///   id, name, window_start, host, pid, username, program, fencing_id,
///   started, ended, outcome, exit_status, exit_signal, duration_seconds,
///   attempt
/// with the outcome derived as RunRecord says (a run still marked running
/// whose lock row is gone or expired reads as lost, ended at the row's expiry
/// while the row is there) and the attempt as run_attempt_column() counts it. A pause is read with
/// the columns
///   name, paused_by, reason, created, paused_until (NULL: until resumed)
/// and is in force while paused_until is NULL or later than now. A lock row
/// is read with the columns
///   id, lockstring, created, expires, locked_by ('' for NULL),
///   seconds_left (expires - now, rounded up to whole milliseconds)
/// (read_lock_row(), records.hpp); it is live while expires is later than
/// now.
enum class Query : std::size_t {
    /// (): one row, (history table exists, pauses table exists, queue
    /// table exists, leaders table exists).
    side_tables,
    /// (): one row, milliseconds since the Unix epoch by the database's clock.
    now_millis,
    /// (name, window_start: UTC text or NULL, host, pid, user, program,
    /// fencing_id): inserts a run, outcome running, started now. One row:
    /// its id.
    start_run,
    /// As start_run, only if no pause of `name` is in force, in one round
    /// trip. One row: (run id or NULL, then the pause columns of the pause
    /// in force, all NULL when none). The run id is NULL exactly when the
    /// pause is there.
    start_run_unless_paused,
    /// (run_id, fencing_id, locked_by, exit_status or NULL, signal or NULL,
    /// outcome): records the end of a run still marked running, in one
    /// atomic step, as the outcome if the lock row (fencing_id, locked_by)
    /// is live then, else lost; the lock row is locked meanwhile, so a
    /// take-over of an expiring lease comes after the record. One row (the
    /// outcome recorded) when it did, none when the run was no longer
    /// marked running.
    finish_run,
    /// (run_id, fencing_id, locked_by): the outcome recorded for that run
    /// of that lock row once it has ended, while the lock row is still
    /// there and held by locked_by (live or not); no row otherwise. What
    /// finish_run reads back when it changed nothing: another holder's row
    /// under the same id answers nothing.
    finished_run,
    /// (name, window_start: UTC text): the runs of that window, oldest first.
    window_runs,
    /// (since: duration or NULL, limit): runs started within `since` of
    /// now (all runs for NULL, whatever their start), newest first.
    history_all,
    /// (since: duration, limit, name): the same, of one name.
    history_name,
    /// (name): the newest succeeded run, if any (at most one row).
    last_success,
    /// (): rows (name, outcome as derived, count), ordered by name, outcome.
    run_counts,
    /// (lockstring): the lock row of that name, live or not: at most one
    /// row, the lock row columns. What Connection::find() reads.
    lock_row,
    /// (prefix: '' for all, expired_only: 1 or 0): the lock rows whose
    /// lockstring starts with `prefix` (compared as it is: no wildcards),
    /// only the expired ones when expired_only is 1, ordered by lockstring
    /// bytewise. What Connection::list() reads.
    lock_rows,
    /// (id, locked_by): one row when the lock row (id, locked_by) is live,
    /// none otherwise. What Connection::is_held() reads.
    lock_held,
    /// (batch): deletes at most `batch` expired lock rows, those the expiry
    /// index finds, oldest expiry first where the dialect can say so. One
    /// row: how many it deleted. What Connection::purge_expired_batch()
    /// runs without a run history.
    purge_locks,
    /// (batch): as purge_locks, and the runs of the rows it deletes that
    /// are still marked running end in the same transaction: outcome lost,
    /// ended at the row's expiry. One row: how many lock rows it deleted.
    purge_locks_and_runs,
    /// (): one row, (rows not expired, all rows) of the lock table.
    lock_counts,
    /// (retention: duration, batch): deletes at most `batch` runs started
    /// more than `retention` ago, never one still running under a live lock
    /// nor a --once-per run whose window may still be current (windows are
    /// at most 366 days). Affected rows: how many.
    prune_runs,
    /// (retention: duration): one row, how many runs prune_runs would
    /// delete, all batches together.
    count_runs,
    /// (name, paused_by, reason, for: duration or NULL): inserts or replaces
    /// the pause of `name` (created now, until now + for). One row: the
    /// pause as stored.
    pause,
    /// (name): deletes the pause of `name`. No row when there was none,
    /// else one row: whether it was in force.
    resume,
    /// (name): the pause of `name` in force now (at most one row).
    paused,
    /// (): every pause in force, by name (bytewise).
    pauses,
    /// (batch): deletes at most `batch` pauses that have ended, checking
    /// each again as it deletes it (a pause renewed meanwhile stays).
    /// Affected rows: how many.
    purge_pauses,
    /// (): one row, how many pauses have ended.
    count_pauses,
    /// (name, waiter, inbox, lease: duration): joins the queue of `name`
    /// (a lock's name, a semaphore's without "#N") at its end, expiring
    /// lease from now; rows of `name` that expired go first, in the same
    /// transaction. One row: (the new row's id, its ticket; how many live
    /// rows of `name` have a smaller one).
    queue_join,
    /// (ticket, waiter, lease: duration, name): renews the queue row
    /// (ticket, waiter) while it is live. One row: (1 when it was, else 0;
    /// how many live rows of `name` have a smaller ticket).
    queue_poll,
    /// (ticket, waiter): deletes the queue row (ticket, waiter). A backend
    /// with pushes wakes the live waiter right behind it (its inbox, with
    /// the name as payload). Affected rows: how many.
    queue_leave,
    /// (name): one row, how many live waiters are in line for `name`.
    queue_length,
    /// (name, fencing_id, locked_by, value): stores `value` as the value
    /// of the leader of `name` while its lock row (fencing_id, locked_by)
    /// is live, in one atomic step, replacing the value of an older leader
    /// (a smaller fencing id), never a newer one's. A backend with pushes
    /// then tells its listeners, with "name#leader" as payload. One row:
    /// 1 when it stored the value, else 0.
    proclaim,
    /// (name): the lock row of `name`, live or not, and the value stored
    /// for the leader whose lock row it is: at most one row, (id,
    /// lockstring, created, expires, locked_by, seconds_left: the lock row
    /// columns, as lock_row reads them; value or NULL).
    leader,
    /// (limit, name): the runs of `name` that ran its job (every outcome
    /// but the skips, skipped_outcomes_sql), newest first, at most `limit`.
    recent_runs,
    /// (name): the newest skipped run of `name` (at most one row).
    last_skip,
    /// (name, window_start: UTC text or NULL, host, pid, user, program,
    /// fencing_id, outcome): records a skip (a run that did not run its
    /// job, `outcome` one of skipped_outcomes_sql), started and ended now.
    /// One row: its id.
    skip_run,
    /// (): the live rows of the lock table, by lockstring: (lockstring, id,
    /// age: seconds since created, seconds_left: until expires).
    live_locks,
    /// (): the names with live waiters in line, by name: (name, how many).
    queue_lengths,
    /// (): the names of the leaders table (elections), by name.
    leader_names,
    /// (): one row, whether the queue table has its `joined` column (a
    /// queue made by an older sqlock may lack it until `sqlock init`).
    queue_joined,
    /// (): as queue_lengths, with the seconds since the oldest live waiter
    /// of each name joined its line: (name, how many, age). Needs the
    /// queue's `joined` column (queue_joined).
    queue_waits,
};

constexpr std::size_t query_count = static_cast<std::size_t>(Query::queue_waits) + 1;

/// The outcomes of the runs that did not run their job (a skip recorded by
/// `sqlock run --after`), as an SQL list: standard SQL on every backend.
inline const char* const skipped_outcomes_sql = "('after_failed', 'after_pending')";

/// "start_run", ...: the key as a name (PostgreSQL prepares "sqlock_<name>").
const char* query_name(Query key) noexcept;

/// How many parameters the core passes with `key`, as listed above: its
/// SQL may refer to fewer, never to more.
std::size_t query_parameter_count(Query key) noexcept;

/// One parameter of a query: NULL, an integer, text, or a duration. Each
/// backend binds a duration its own way (PostgreSQL and MariaDB as whole
/// milliseconds, SQLite as a date modifier "S.mmm seconds"), so that its
/// SQL does the arithmetic on the database's clock.
class Value {
  public:
    enum class Kind { null, integer, text, millis };

    static Value null() { return Value(Kind::null, 0, {}); }
    static Value integer(std::int64_t n) { return Value(Kind::integer, n, {}); }
    static Value text(std::string s) { return Value(Kind::text, 0, std::move(s)); }
    static Value millis(duration d) { return Value(Kind::millis, d.count(), {}); }

    Kind kind() const noexcept { return kind_; }
    bool is_null() const noexcept { return kind_ == Kind::null; }
    /// The integer, or the duration in milliseconds.
    std::int64_t number() const noexcept { return number_; }
    const std::string& str() const noexcept { return text_; }
    /// As text: the text, the number in decimal, "" for NULL.
    std::string to_text() const;

  private:
    Value(Kind kind, std::int64_t number, std::string text)
        : kind_(kind), number_(number), text_(std::move(text)) {}
    Kind kind_;
    std::int64_t number_;
    std::string text_;
};

/// One column of a result row: its text, or nothing for NULL.
using Field = std::optional<std::string>;

/// What a query gave back: the rows of its result (of the last statement
/// that returns rows, when a backend runs several), and how many rows its
/// statements changed.
struct Rows {
    std::vector<std::vector<Field>> rows;
    std::uint64_t affected = 0;
};

/// The SQL of one key in one dialect.
struct QueryText {
    enum class Mode {
        /// One statement, or several run one after another.
        plain,
        /// Several statements (separated by ';') run as one transaction:
        /// the backend adds its own BEGIN and COMMIT (SQLite: BEGIN
        /// IMMEDIATE, which takes the write lock at once; MariaDB: START
        /// TRANSACTION, rolled back if the batch stops part-way).
        transaction,
        /// Run about once per connection: a backend that prepares its
        /// statements sends this one with its text instead, in one round
        /// trip rather than a PREPARE and an execution (PostgreSQL).
        unprepared,
    };
    std::string sql;
    Mode mode = Mode::plain;
};

/// StatementSet
///
/// A backend's SQL for every Query, by key: data, built once per target
/// (table names are part of the text; values are always bound, never part
/// of it). Asking for a key the set lacks is errc::backend, naming both.
///
///     StatementSet set("PostgreSQL");
///     set.add(Query::now_millis, "SELECT floor(extract(epoch FROM now()) * 1000)::bigint");
class StatementSet {
  public:
    explicit StatementSet(std::string dialect) : dialect_(std::move(dialect)) {}

    StatementSet& add(Query key, std::string sql, QueryText::Mode mode = QueryText::Mode::plain);
    /// The text of `key`; throws errc::backend when the set has none.
    const QueryText& operator[](Query key) const;

  private:
    std::string dialect_;
    std::array<std::optional<QueryText>, query_count> texts_{};
};

/// "recording the start of a run of 'job'": what running `key` with
/// `params` does, for the messages of the errors it may meet (the same on
/// every backend).
std::string describe_query(Query key, const std::vector<Value>& params);

}  // namespace sqlock::detail
