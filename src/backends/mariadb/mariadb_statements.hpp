// The SQL of the MariaDB backend: one batch of statements per operation,
// sent in one round trip (CLIENT_MULTI_STATEMENTS). The lock's own
// statements are functions below; the core's are the StatementSet of
// statement_set(), with bound parameters.
//
// Every value is a literal made here: text as a hex literal with a character
// set introducer (_utf8mb4 X'6a6f62'), which no sql_mode, character set or
// quote in the text can turn into SQL; numbers and durations from their C++
// types. Times are the server's: UTC_TIMESTAMP(3), constant within one
// statement, and column arithmetic; leases travel as microsecond intervals.
//
// Result columns of a lock row, in this order (read_lock_row(), records.hpp):
//   id, lockstring, created, expires, locked_by, seconds_left
// with created/expires as UTC text "YYYY-MM-DD HH:MM:SS.mmm" and seconds_left
// to the millisecond, rounded up (seconds_left > 0 exactly when expires >
// now), as the other backends report them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <vector>

#include "contract/statement_set.hpp"
#include "contract/tuned_claims.hpp"
#include "mariadb_target.hpp"
#include "sqlock/duration.hpp"

namespace sqlock::detail::mariadb::sql {

/// How a connection's batches take a name's turn, and whether they write
/// the fencing register (docs/mariadb.md, "Galera multi-primary").
///
/// By default a turn is GET_LOCK(key, wait), taken before the batch's
/// transaction and given back after it. With `row_turns`, it is the row
/// lock of the name's row in the fencing table (<table>_fencing),
/// inserted if missing and held until the batch's transaction ends, which
/// then begins before the turn: on Galera, where GET_LOCK is one node's
/// (and refused on some releases), and on a server that refused GET_LOCK
/// (1235). A row turn's wait is bounded by max_statement_time (error 1969
/// when it runs out: the turn did not come).
///
/// With `register_ids` (Galera), every id an acquisition draws is written
/// to the fencing register of its name in the same transaction, and only
/// if it is larger than the id there: else the write sets -1, which the
/// table's CHECK refuses (error 4025), and the attempt is rolled back and
/// made again. Certification then orders the ids (docs/mariadb.md).
struct Protocol {
    bool row_turns = false;
    bool register_ids = false;
};

/// `text` as a utf8mb4 hex literal: _utf8mb4 X'...' (or '' when empty).
std::string literal(const std::string& text);

/// The names of `entries` held shared, in their order: the ones whose turn
/// a mixed set's renewal and release take.
std::vector<std::string> shared_names(const std::vector<ClaimEntry>& entries);

/// The GET_LOCK name that serialises acquirers of `lockstring` in `t`'s
/// table: "sqlock:" + 16 hex digits (MySQL allows at most 64 characters).
std::string turn_key(const MariaTarget& t, const std::string& lockstring);

/// Acquire: take the turn; in one transaction (with `take_over`) delete the
/// row if expired, insert ours and read the row; give the turn back. The one result set has
/// one row (ours: 1/0, turn: 1/0, row columns...), or none when the name is
/// free (the turn was not had). `wait`: how long GET_LOCK may wait for the turn
/// (to the millisecond). Behind an active `gate`, the turn is not taken
/// while a live waiter it names is queued: the batch then stops as when the
/// turn does not come.
/// Without `take_over` (the common case: the name free or held live), no
/// DELETE, and our row read back by its id; the holder's row, when it has
/// expired, is for a second batch with `take_over` to replace.
std::string acquire(const MariaTarget& t, const Protocol& p, const std::string& lockstring,
                    duration lease, const std::string& locked_by, duration wait,
                    const QueueGate& gate, bool take_over);

/// acquire()'s parts, also for sqlock-bench to price each of its guarantees
/// alone. The acquiring insert of a row and the read of the row it met or
/// made (read_met_row), as acquire() sends them: `name` is the lockstring's
/// SQL (in acquire(), its literal only while the turn is had). Ends with
/// ";\n".
std::string insert_and_read(const MariaTarget& t, const std::string& name, duration lease,
                            const std::string& locked_by);

/// `body` (statements, each ending with ";\n") under the turn of
/// `lockstring` as acquire() takes it: @sqlock_turn is 1 while the turn is
/// had (waited for up to `wait`; behind an active `gate`, not taken while a
/// live waiter it names is queued), and the turn is given back after.
std::string under_turn(const MariaTarget& t, const std::string& lockstring, duration wait,
                       const QueueGate& gate, const std::string& body);

/// The statement that reads, right after an acquiring INSERT, the row it
/// met or made: (ours: 1/0, turn: 1/0, row columns...).
std::string read_met_row(const MariaTarget& t);

/// One row: the server's time now and `lease` from now, as the row
/// columns' created and expires.
std::string lease_from_now(duration lease);

/// A slot of semaphore `name` in one batch, as acquire() takes a name,
/// under the semaphore's turn (the one every "name#N" shares): picks a live slot of ours
/// (`locked_by`), else the lowest free or expired one in 1..capacity, and inserts ours there. The
/// one result set's row (ours: 1/0, turn: 1/0, row columns...) is our row, else our live slot, else
/// the slot whose lease ends first; none when the turn did not come and no slot row exists.
std::string acquire_slot(const MariaTarget& t, const Protocol& p, const std::string& name,
                         int capacity, duration lease, const std::string& locked_by, duration wait,
                         const QueueGate& gate);

/// A lock set, all rows or none (Connection::try_acquire_set): every
/// name's turn, in one order, each waiting its share of `wait`; then one
/// transaction that writes every row only when all turns came, no name is
/// held live and (with `yield_to_queue`) nobody waits in line for one, else
/// stops at a NULL name (error 1048) with nothing written; the turns given
/// back after its commit. Last result set: our rows, by id.
std::string acquire_set(const MariaTarget& t, const Protocol& p,
                        const std::vector<std::string>& lockstrings, duration lease,
                        const std::string& locked_by, duration wait, bool yield_to_queue);

/// A lock set with names held shared, all rows or none
/// (Connection::try_acquire_mixed_set): as acquire_set, and for each shared
/// entry its marker inserted or extended and its holder row inserted, as
/// acquire_shared does. Last result set: our rows (exclusive names and
/// holder rows), by id.
std::string acquire_mixed_set(const MariaTarget& t, const Protocol& p,
                              const std::vector<ClaimEntry>& entries, duration lease,
                              const std::string& locked_by, duration wait, bool yield_to_queue);

/// The renewal of a lock set with names held shared
/// (Connection::renew_mixed_set): the shared names' turns, then one
/// transaction. First result set: whether every turn came; last: the rows
/// renewed.
std::string renew_mixed_set(const MariaTarget& t, const Protocol& p,
                            const std::vector<ClaimEntry>& entries,
                            const std::vector<std::int64_t>& ids, const std::string& locked_by,
                            duration lease, duration wait);

/// The release of a lock set with names held shared
/// (Connection::release_mixed_set): the shared names' turns, then one
/// transaction. First result set: whether every turn came; last: how many
/// of `ids` were deleted.
std::string release_mixed_set(const MariaTarget& t, const Protocol& p,
                              const std::vector<ClaimEntry>& entries,
                              const std::vector<std::int64_t>& ids, const std::string& locked_by,
                              duration wait);

/// Gives back the turns of a set's names (after a failed acquire_set, with
/// a ROLLBACK before it; row turns end with that ROLLBACK).
std::string release_set_turns(const MariaTarget& t, const Protocol& p,
                              const std::vector<std::string>& lockstrings);

/// The live rows of a set's names, by name, each with a last column that
/// says whether a live waiter is in line for one of them (with
/// `yield_to_queue`); a single row of NULLs but that column when none is
/// live.
std::string set_holders(const MariaTarget& t, const std::vector<std::string>& lockstrings,
                        bool yield_to_queue);

/// Renews the live rows among `ids` held by `locked_by`, then reads them.
std::string renew_set(const MariaTarget& t, const std::vector<std::int64_t>& ids,
                      const std::string& locked_by, duration lease);

/// Deletes the rows among `ids` held by `locked_by` (affected rows: how many).
std::string release_set(const MariaTarget& t, const std::vector<std::int64_t>& ids,
                        const std::string& locked_by);

/// A shared hold (Connection::try_acquire_shared): the name's turn (as
/// acquire's, not taken behind an active `gate` while a live waiter it
/// names is queued: @sqlock_queued), then one transaction that takes over
/// an expired row of the name, inserts or extends the marker, and inserts
/// our row `own` only when the name's row is a marker: else that INSERT
/// stops the batch at a NULL name (error 1048) and the caller rolls back.
/// Both rows expire at one moment. Last result set: our row.
std::string acquire_shared(const MariaTarget& t, const Protocol& p, const std::string& name,
                           const std::string& own, duration lease, const std::string& locked_by,
                           duration wait, const QueueGate& gate);

/// After a failed acquire_shared (rolled back): whether waiters went first
/// (one row, 1/0), then the live exclusive row of `name` and our `own`
/// row, if any.
std::string shared_refusal(const MariaTarget& t, const std::string& name, const std::string& own);

/// Renews a shared holder's live row and extends the marker to match,
/// under the name's turn. Result sets: (turn came: 1/0), then our row as
/// renewed (none: lost).
std::string renew_shared(const MariaTarget& t, const Protocol& p, std::int64_t id,
                         const std::string& name, const std::string& locked_by, duration lease,
                         duration wait);

/// Releases a shared holder's row (kept to created + min_hold while that is
/// ahead), then shrinks the marker to the other live holders' latest expiry
/// or deletes it, under the name's turn. Result sets: (turn came: 1/0),
/// then (kept, deleted).
std::string release_shared(const MariaTarget& t, const Protocol& p, std::int64_t id,
                           const std::string& name, const std::string& locked_by, duration min_hold,
                           duration wait);

/// Ends the transaction and gives the turn back after a failed acquire batch.
std::string release_turn(const MariaTarget& t, const Protocol& p, const std::string& lockstring);

/// The turn of `lockstring` for a transaction-scoped lock, in the caller's
/// transaction: one statement answering 1 when it came within `wait`
/// (GET_LOCK's turn; none with row turns: "" then), and the one that gives
/// it back ("" for none).
std::string transaction_turn(const MariaTarget& t, const Protocol& p, const std::string& lockstring,
                             duration wait);
std::string transaction_turn_back(const MariaTarget& t, const Protocol& p,
                                  const std::string& lockstring);
/// With row turns, the turn a transaction-scoped lock takes once it found
/// the name free, before its insert (in the order every acquirer takes
/// the row turn and the name's row, so none deadlock), held to the
/// caller's commit; "" without.
std::string transaction_row_turn(const MariaTarget& t, const Protocol& p,
                                 const std::string& lockstring);

/// With `register_ids`: writes row `id` (of name `lockstring`, just
/// inserted) to the fencing register, as acquisitions do; "" without.
std::string register_id(const MariaTarget& t, const Protocol& p, const std::string& lockstring,
                        const std::string& id);

/// Release without a minimum hold: one DELETE (affected rows: 1 or 0).
std::string delete_exact(const MariaTarget& t, std::int64_t id, const std::string& locked_by);

/// Galera's release without a minimum hold: the delete, and with it the id
/// written to the register as the one released last, in one transaction.
/// Last result: (deleted: 1/0).
std::string release_registered(const MariaTarget& t, std::int64_t id, const std::string& lockstring,
                               const std::string& locked_by);

/// One row, 1/0: the register of `lockstring` says row `id` was released
/// by its holder (an earlier release_registered() went through). Galera.
std::string released_before(const MariaTarget& t, std::int64_t id, const std::string& lockstring);

/// Release with a minimum hold: delete the row if created + min_hold is past,
/// else shorten its expiry to that. Last result: (released: 1/0, exists: 1/0).
std::string release_keeping(const MariaTarget& t, std::int64_t id, const std::string& locked_by,
                            duration min_hold);

/// Renew: extend if ours and not expired, then read it back (no row: lost).
std::string renew(const MariaTarget& t, std::int64_t id, const std::string& locked_by,
                  duration lease);

/// The fencing register's rows no lock row uses and nobody wrote for a day
/// (a stale draw is never that old: docs/mariadb.md), at most `batch`.
std::string purge_register(const MariaTarget& t, std::size_t batch);

/// The schema script (sql/mariadb/schema.sql) for `t`'s table, with
/// `collation` for the text columns; `wsrep`: the server has Galera's
/// variables (MariaDB), and the guard checks rows its own way where
/// wsrep_on.
std::string schema_script(const MariaTarget& t, const std::string& collation, bool wsrep);

/// One row: 1 when the guard's definition has the Galera check, 0 when it
/// predates it, NULL when information_schema does not show it to this user.
std::string guard_is_current(const MariaTarget& t);

/// One row, one column: 1 when the table exists.
std::string table_exists(const MariaTarget& t);

/// One row: how many guard procedures (schema.sql's ${guard}) of the table
/// information_schema lists (those this user has a privilege on).
std::string guard_exists(const MariaTarget& t);

/// The core's statements (statement_set.hpp) for `t`'s table, with their
/// parameters as ?1, ?2, ... for bind().
StatementSet statement_set(const MariaTarget& t);

/// `sql` with each ?N (outside quotes) replaced by the literal of params[N-1]:
/// NULL, a number (a duration: its milliseconds), or text as literal() makes
/// it. Throws errc::backend for an N beyond `params`. Only for the SQL of a
/// StatementSet: it knows quotes but not comments nor backslash escapes, so
/// it refuses (errc::backend) SQL with "--", "#", "/*" or a backslash.
std::string bind(const std::string& sql, const std::vector<Value>& params);

/// The exact, no-pad binary collations, best first: MariaDB's, MySQL 8's.
/// One row per collation the server has.
std::string exact_collations();

}  // namespace sqlock::detail::mariadb::sql
