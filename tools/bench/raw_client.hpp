// The baseline: a hand-written lock client on the database's own C API.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "target.hpp"

namespace sqlock_bench {

/// RawClient
///
/// What a careful programmer would write without sqlock: one connection,
/// the statements prepared once, a fixed owner string, and a lock that is
/// an INSERT ... ON CONFLICT DO NOTHING RETURNING id (on MariaDB: INSERT
/// IGNORE and the insert id from the same reply) followed by a DELETE by id
/// and owner. It does not take over expired rows, build owner JSON, keep
/// a pool or notify waiters: the difference to sqlock is what those cost.
/// It also does the benchmark's bulk work (filler rows, dropping tables).
/// Not thread-safe: one per process.
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

    /// What sqlock's MariaDB acquire adds to try_acquire(), one guarantee
    /// on top of the other, for the benchmark to price each alone. Each
    /// level is the previous one and:
    enum class layer {
        text,        ///< the statements as text (literals), not prepared
        batch,       ///< one multi-statement batch: the insert (ON DUPLICATE
                     ///< KEY UPDATE, not IGNORE) and the row read back by id
                     ///< as sqlock reads it (its columns, with the server's
                     ///< clock)
        turn,        ///< GET_LOCK before and RELEASE_LOCK after the batch
        queue_gate,  ///< the turn taken only if no waiter is queued for the
                     ///< name (a lookup in the waiting line's table)
    };
    /// try_acquire() with `layers` up to and including `up_to`; the new id,
    /// or 0. Only where it means something (MariaDB); throws elsewhere.
    virtual std::int64_t try_acquire_with(layer up_to, const std::string& name) {
        (void)up_to;
        (void)name;
        throw std::logic_error("layered acquisitions are MariaDB's");
    }

    /// What sqlock's PostgreSQL acquire+release adds to try_acquire() and
    /// release(), one guarantee on top of the other, for the benchmark to
    /// price each alone. Each level is the previous one and:
    enum class pg_layer {
        take_over,   ///< ON CONFLICT DO UPDATE of an expired row (a new id)
                     ///< instead of DO NOTHING: one round trip takes over a
                     ///< crashed holder's lock
        turn,        ///< the name's transaction advisory lock taken before
                     ///< the id is drawn: ids grow in the order holders get
                     ///< the name
        queue_gate,  ///< no row while a live waiter is queued for the name
                     ///< (an index probe of the waiting line's table)
        wake_up,     ///< the release notifies the name's channel when a
                     ///< listener says it waits (a try of its advisory key)
    };
    /// One acquire+release cycle with `layers` up to and including `up_to`;
    /// false when the name was held. PostgreSQL only; throws elsewhere.
    virtual bool cycle_with(pg_layer up_to, const std::string& name) {
        (void)up_to;
        (void)name;
        throw std::logic_error("layered PostgreSQL cycles are PostgreSQL's");
    }

    /// try_acquire_slot() wrapped in sqlock's guarantees (layer::queue_gate,
    /// in a transaction as sqlock takes a slot), for
    /// the price of those alone on a slot. MariaDB only; throws elsewhere.
    virtual std::int64_t try_acquire_slot_guarded(const std::string& name, int capacity) {
        (void)name;
        (void)capacity;
        throw std::logic_error("guarded raw slots are MariaDB's");
    }

    /// A set's worth of rows, the least a database can do for it: every
    /// name inserted by one statement (one transaction), then every row
    /// deleted by another. Throws if any name had a row.
    virtual void cycle_many(const std::vector<std::string>& names) = 0;

    /// One transaction of an application's on the lock table's database:
    /// BEGIN, then `guard` when not empty (the statement sqlock::guard
    /// runs), then one row inserted into `<table>_data` (made on first use),
    /// then COMMIT, each its own round trip, as a client sends them.
    virtual void write_transaction(const std::string& guard) = 0;

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

/// Connects to `location` (an SQLite file path, a PostgreSQL URL or a
/// mariadb:// / mysql:// URL) for the
/// lock table `table` (a plain identifier).
std::unique_ptr<RawClient> connect_raw(backend_kind kind, const std::string& location,
                                       const std::string& table);

std::unique_ptr<RawClient> connect_raw_sqlite(const std::string& path, const std::string& table);
std::unique_ptr<RawClient> connect_raw_postgres(const std::string& url, const std::string& table);
std::unique_ptr<RawClient> connect_raw_mariadb(const std::string& url, const std::string& table);

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
