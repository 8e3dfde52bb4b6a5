// The SQL of the MariaDB backend: one batch of statements per operation,
// sent in one round trip (CLIENT_MULTI_STATEMENTS).
//
// Every value is a literal made here: text as a hex literal with a character
// set introducer (_utf8mb4 X'6a6f62'), which no sql_mode, character set or
// quote in the text can turn into SQL; numbers and durations from their C++
// types. Times are the server's: UTC_TIMESTAMP(3), constant within one
// statement, and column arithmetic; leases travel as microsecond intervals.
//
// Result columns of a lock row, in this order (see read_row()):
//   id, lockstring, created, expires, locked_by, seconds_left
// with created/expires as UTC text "YYYY-MM-DD HH:MM:SS.mmm" and seconds_left
// to the millisecond, rounded up (seconds_left > 0 exactly when expires >
// now), as the other backends report them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "mariadb_target.hpp"
#include "sqlock/duration.hpp"

namespace sqlock::detail::mariadb::sql {

/// `text` as a utf8mb4 hex literal: _utf8mb4 X'...' (or '' when empty).
std::string literal(const std::string& text);

/// The GET_LOCK name that serialises acquirers of `lockstring` in `t`'s
/// table: "sqlock:" + 16 hex digits (MySQL allows at most 64 characters).
std::string turn_key(const MariaTarget& t, const std::string& lockstring);

/// Acquire: take the turn; in one transaction delete the row if expired,
/// insert ours and read the row; give the turn back. The one result set has
/// one row (ours: 1/0, turn: 1/0, row columns...), or none when the name is
/// free (the turn was not had). `wait`: how long GET_LOCK may wait for the turn
/// (to the millisecond).
std::string acquire(const MariaTarget& t, const std::string& lockstring, duration lease,
                    const std::string& locked_by, duration wait);

/// Ends the transaction and gives the turn back after a failed acquire batch.
std::string release_turn(const MariaTarget& t, const std::string& lockstring);

/// Release without a minimum hold: one DELETE (affected rows: 1 or 0).
std::string delete_exact(const MariaTarget& t, std::int64_t id, const std::string& locked_by);

/// Release with a minimum hold: delete the row if created + min_hold is past,
/// else shorten its expiry to that. Last result: (released: 1/0, exists: 1/0).
std::string release_keeping(const MariaTarget& t, std::int64_t id, const std::string& locked_by,
                            duration min_hold);

/// Renew: extend if ours and not expired, then read it back (no row: lost).
std::string renew(const MariaTarget& t, std::int64_t id, const std::string& locked_by,
                  duration lease);

std::string is_held(const MariaTarget& t, std::int64_t id, const std::string& locked_by);
std::string purge(const MariaTarget& t, std::size_t batch);
std::string list(const MariaTarget& t, const std::string& prefix, bool expired_only);
std::string find(const MariaTarget& t, const std::string& lockstring);

/// The schema script (sql/mariadb/schema.sql) for `t`'s table, with
/// `collation` for the text columns.
std::string schema_script(const MariaTarget& t, const std::string& collation);

/// One row, one column: 1 when the table exists.
std::string table_exists(const MariaTarget& t);

/// One row, two columns: whether the run history table and the pauses
/// table exist (1 or 0 each), in one round trip.
std::string side_tables_exist(const MariaTarget& t);

// Pauses (backend.hpp). Read with the columns name, paused_by, reason,
// created, paused_until (UTC text or NULL).

/// Inserts or replaces the pause of `name`, then reads it back.
std::string pause(const MariaTarget& t, const std::string& name, const std::string& paused_by,
                  const std::string& reason, std::optional<duration> for_);
/// A transaction: deletes the pause of `name`; its last result is one row,
/// one column: 1 when the deleted pause was in force.
std::string resume(const MariaTarget& t, const std::string& name);
/// The pause of `name` in force (no row: none).
std::string paused(const MariaTarget& t, const std::string& name);
/// Every pause in force, by name.
std::string pauses(const MariaTarget& t);
/// Deletes at most `batch` pauses that have ended (one autocommit DELETE;
/// affected rows: how many).
std::string purge_pauses(const MariaTarget& t, std::size_t batch);
/// One row, one column: how many pauses have ended.
std::string count_pauses(const MariaTarget& t);

// The run history (backend.hpp). Runs are read with the columns id, name,
// window_start, host, pid, username, program, fencing_id, started, ended,
// outcome, exit_status, exit_signal, duration_seconds (times as UTC text,
// NULL where unknown).

/// Purge with the runs of the purged rows ending with their lease, in one
/// transaction. The DELETE's affected rows are the third result's.
std::string purge_with_runs(const MariaTarget& t, std::size_t batch);
/// One row: milliseconds since the epoch, by the server's UTC clock.
std::string now_millis();
/// Inserts a run; last result: its id.
std::string start_run(const MariaTarget& t, const std::string& name, std::int64_t fencing_id,
                      const std::string& host, std::int64_t pid, const std::string& user,
                      const std::string& program, const std::string& window_start);
/// Records a run's end (the lock row locked FOR UPDATE meanwhile); last
/// result: (changed: 1/0, outcome).
std::string finish_run(const MariaTarget& t, std::int64_t run_id, std::int64_t fencing_id,
                       const std::string& locked_by, const std::string& outcome,
                       const std::string& exit_status, const std::string& signal);
std::string window_runs(const MariaTarget& t, const std::string& name,
                        const std::string& window_start);
std::string history(const MariaTarget& t, const std::string& name, duration since,
                    std::size_t limit);
/// The newest succeeded run of `name` (none or one row).
std::string last_success(const MariaTarget& t, const std::string& name);
/// Rows (name, outcome as derived, count), ordered by name.
std::string run_counts(const MariaTarget& t);
/// One row: (held, all rows).
std::string lock_counts(const MariaTarget& t);
std::string prune_runs(const MariaTarget& t, duration retention, std::size_t batch);
/// One row, one column: how many runs prune_runs() would delete, all
/// batches together.
std::string count_runs(const MariaTarget& t, duration retention);

/// The exact, no-pad binary collations, best first: MariaDB's, MySQL 8's.
/// One row per collation the server has.
std::string exact_collations();

}  // namespace sqlock::detail::mariadb::sql
