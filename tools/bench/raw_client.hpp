// The baseline: a hand-written lock client on the database's own C API, one
// per backend, in the backend's folder (src/backends/<name>/testing/
// <name>_bench.cpp, BenchHooks::connect).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "sqlock/lock.hpp"
#include "sqlock/transaction.hpp"

namespace sqlock_bench {

/// RawClient
///
/// What a careful programmer would write without sqlock: one connection,
/// the statements prepared once, a fixed owner string, and a lock that is
/// an INSERT that does nothing when the row is there, returning the new id
/// (in the same reply), followed by a DELETE by id and owner. It does not take over expired rows,
/// build owner JSON, keep a pool or notify waiters: the difference to sqlock is what those cost. It
/// also does the benchmark's bulk work (filler rows, dropping tables). Not thread-safe: one per
/// process.
class RawClient {
  public:
    virtual ~RawClient() = default;

    /// Inserts `name` (lease 1 h) unless a row exists; the new id, or 0.
    virtual std::int64_t try_acquire(const std::string& name) = 0;
    /// Deletes the row with this id and our owner string.
    virtual void release(std::int64_t id) = 0;
    /// Semaphore in one statement: the lowest slot among name#1..name#capacity
    /// without a row; the new id, or 0 when all have rows.
    virtual std::int64_t try_acquire_slot(const std::string& name, int capacity) = 0;

    /// One acquire+release cycle with sqlock's guarantees added to
    /// try_acquire() and release() up to and including layer `up_to` (the
    /// backend's BenchHooks::layers, counted from 0), each on top of the
    /// ones before, for the benchmark to price each alone; false when the
    /// name was held. Only where the backend lists layers; throws elsewhere.
    virtual bool cycle_layer(std::size_t up_to, const std::string& name) {
        (void)up_to;
        (void)name;
        throw std::logic_error("this backend's baseline has no layers");
    }

    /// try_acquire_slot() wrapped in sqlock's guarantees (the backend's
    /// BenchHooks::guarded_slot), for the price of those alone on a slot.
    /// Only where the backend names them; throws elsewhere.
    virtual std::int64_t try_acquire_slot_guarded(const std::string& name, int capacity) {
        (void)name;
        (void)capacity;
        throw std::logic_error("this backend's baseline has no guarded slots");
    }

    /// A set's worth of rows, the least a database can do for it: every
    /// name inserted by one statement (one transaction), then every row
    /// deleted by another. Throws if any name had a row.
    virtual void cycle_many(const std::vector<std::string>& names) = 0;

    /// One transaction of an application's on the lock table's database:
    /// BEGIN, then `extra` when not empty (the statement sqlock::guard
    /// runs, or one that does nothing), then one row inserted into
    /// `<table>_data` (made on first use), then COMMIT, each its own round
    /// trip, as a client sends them.
    virtual void write_transaction(const std::string& extra) = 0;

    /// The same transaction guarded by `lock` as a program guards it with
    /// sqlock's adapter for this client's handle, kept for the connection
    /// where the adapter can keep the guard's statement prepared (SQLite);
    /// elsewhere the guard's statement, as Lock::guard_statement() writes
    /// it, run as write_transaction() runs `extra`.
    virtual void guarded_write_transaction(const sqlock::Lock& lock) {
        write_transaction(lock.guard_statement().literal);
    }

    /// Inserts rows prefix<first> .. prefix<first+count-1> in one
    /// transaction: live for a day, or already expired an hour ago.
    virtual void fill(const std::string& prefix, std::int64_t first, std::int64_t count,
                      bool expired) = 0;
    /// Deletes every expired row in one statement; returns how many.
    virtual std::int64_t purge_expired_at_once() = 0;
    /// Drops the lock table, the tables and the guard Locker::init() made
    /// beside it (lock_table_family()), and write_transaction()'s table.
    virtual void drop_table() = 0;
    /// "SQLite 3.40.1", "PostgreSQL 15.18 (...)", "MariaDB 10.11.6".
    virtual std::string server_version() = 0;
    /// The server's own count of the work it has done so far, for every
    /// client: PostgreSQL's transactions in this database, MariaDB's
    /// statements (Questions); -1 where there is no server (SQLite).
    virtual std::int64_t work_done() { return -1; }
};

/// The lock table `table` (a plain identifier) and the tables
/// Locker::init() creates beside it, as the library documents them:
/// `<table>_runs`, `<table>_pauses`, `<table>_queue` and `<table>_leaders`
/// (locker.hpp). Dropping only the lock table left them behind per
/// benchmark section in the database.
std::vector<std::string> lock_table_family(const std::string& table);

/// A locked_by value like sqlock's (same keys, similar length) for the
/// baseline's rows, so rows and indexes have comparable sizes.
std::string raw_owner_string();

}  // namespace sqlock_bench
