// Locks that protect the data too: a held lock guarding the caller's own
// transaction on the lock's database, and locks scoped to such a transaction.
//
// The lock table lives in the same database as the data it protects, so a
// write can be made conditional on the lock itself: guard() run inside the
// caller's transaction fails unless this holder still holds the lock, and
// from then until that transaction ends nobody can take the name over,
// force-release it or reap it. A holder that was paused past its lease (a
// frozen VM, a stopped process) and wakes up cannot commit a stale write:
// its guard fails and its transaction rolls back. See docs/guarded-writes.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sqlock/duration.hpp"

namespace sqlock {

class Locker;
class Lock;
class LockSet;
class Leadership;
class error;

/// Transaction
///
/// The caller's open transaction on the lock's database, as sqlock needs it:
/// one statement at a time. sqlock/postgres/transaction.hpp (libpqxx),
/// sqlock/sqlite/transaction.hpp (sqlite3*) and sqlock/mariadb/transaction.hpp
/// (MYSQL*) implement it over the handles their users already have; another
/// driver needs only these three calls. sqlock never commits, rolls back or
/// ends the transaction.
class Transaction {
  public:
    /// One row of a result: each column as text, nullopt for NULL.
    using row = std::vector<std::optional<std::string>>;

    virtual ~Transaction() = default;

    /// The backend the handle speaks, as Locker::backend_name() says it:
    /// "postgresql", "sqlite" or "mariadb".
    virtual std::string backend() const = 0;

    /// Whether a transaction is open on the handle. Outside one each
    /// statement commits alone, and a guard would protect nothing.
    virtual bool in_transaction() = 0;

    /// Runs one statement, its placeholders ($1, $2, ... on PostgreSQL, ?
    /// elsewhere) bound to `params` as text, and returns its rows. Throws
    /// sqlock::error: errc::connection when the link broke, errc::busy when
    /// the database was locked (SQLite), else errc::backend carrying the
    /// driver's code (a SQLSTATE, an SQLite result code name, or MariaDB's
    /// "errno/SQLSTATE") and its message.
    virtual std::vector<row> run(const std::string& sql,
                                 const std::vector<std::string>& params) = 0;
};

/// Takes `name` inside the caller's open transaction `tx` on `locker`'s
/// database, held exactly until `tx` commits or rolls back, leaving no row
/// behind (like PostgreSQL's pg_advisory_xact_lock, but excluding every
/// holder of the name in the lock table: sqlock's locks, sets and shared
/// holds, and DBIx::Locker programs, which wait for `tx` to end).
/// Exclusive only; no heartbeat, no release: the transaction is the lease.
/// Returns the fencing id the name got. Waits up to `wait` (zero: one
/// attempt): errc::busy or errc::timeout when it is held, and `tx` stays
/// usable. One refusal needs a rollback: errc::busy saying "roll it back",
/// when the name was taken in the instant between sqlock's look and its
/// insert and `tx` now holds a lock the holder needs (SQLite's write lock;
/// on MariaDB the row's). Throws errc::invalid_argument for a bad name or
/// wait, a `tx` of another backend, no transaction open, or a moved-from
/// Locker. Does not take a place in the line of waiters (waiting.md). On
/// PostgreSQL use READ COMMITTED: docs/guarded-writes.md says what each
/// backend's transaction holds.
std::int64_t lock_transaction(Transaction& tx, const Locker& locker, const std::string& name,
                              duration wait = duration::zero());

/// The statement that guards a transaction with one held row, for a driver
/// sqlock has no adapter for: run `sql` with `params` bound (or `literal`,
/// the same with the values written in) inside the transaction, and treat
/// its error as "lost": roll back. Made by Lock::guard_statement() and
/// LockSet::guard_statements().
struct GuardStatement {
    std::string backend;              ///< "postgresql", "sqlite" or "mariadb"
    std::string sql;                  ///< with placeholders: $1.. or ?
    std::vector<std::string> params;  ///< their values, in order
    std::string literal;              ///< the values written in (SQLOCK_GUARD)
    std::string name;                 ///< the lock's name, for messages
};

/// Makes `tx`, open on the lock's database, commit only while `lock` is
/// held: fails with errc::lost (naming the lock) unless this holder still
/// holds it by the database's clock now; from then until `tx` ends nobody
/// can take the name over, force-release it or reap it (they wait for the
/// commit or rollback; on MariaDB Galera a take-over on another node does
/// not wait but aborts `tx`: see commit_failed()). Every write of `tx`,
/// before or after the guard, commits only if the lock was held all the way
/// to the commit. After an error the caller must roll `tx` back (on
/// PostgreSQL it is aborted).
///
/// Throws errc::invalid_argument for a released or moved-from lock, a `tx`
/// of another backend, or no transaction open on `tx` (nothing written);
/// errc::configuration when `tx`'s database has no guard (`sqlock init`
/// creates it; or `tx` is on another database without a lock table);
/// errc::lost too when `tx` is on another database with a lock table of
/// that name, where this holder holds nothing.
void guard(Transaction& tx, const Lock& lock);
/// Guards `tx` with every row of `set` (one statement per name).
void guard(Transaction& tx, const LockSet& set);
/// Guards `tx` with the leader's lock: writes only the current leader makes.
void guard(Transaction& tx, const Leadership& leadership);

/// After a transaction guarded by `lock` failed with `e` (as
/// Transaction::run throws it), at a statement after guard() or at its
/// commit: says why, and always throws. Where a take-over does not wait
/// for a guarded transaction but the database aborts it (MariaDB on
/// Galera, a take-over on another node: error 1213 from certification or
/// from the node applying the take-over; 1180 or 1047 when the node left
/// the cluster meanwhile), throws errc::lost naming the lock when it is no
/// longer this holder's, and errc::busy when it still is (the transaction
/// lost a race with another write: roll back and try again); nothing of
/// the transaction was committed either way. Any other error is thrown as
/// it is. Asks the database (Lock::held()) only for such an abort.
/// sqlock/mariadb/transaction.hpp's commit() calls it.
[[noreturn]] void commit_failed(const error& e, const Lock& lock);
/// The same for a transaction guarded by every row of `set`.
[[noreturn]] void commit_failed(const error& e, const LockSet& set);
/// The same for a transaction guarded by the leader's lock.
[[noreturn]] void commit_failed(const error& e, const Leadership& leadership);

}  // namespace sqlock
