// The backend contract: what every database must do for sqlock.
//
// A Backend is created once per Locker from its URL and creates Connections
// for the Locker's pool. A Connection is used by one thread at a time (the
// pool guarantees it). Every time value is computed by the database; the
// client's clock is never consulted for anything stored or compared.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "contract/claim.hpp"
#include "contract/row_names.hpp"
#include "contract/statement_set.hpp"
#include "contract/table_family.hpp"
#include "sqlock/diagnosis.hpp"
#include "sqlock/duration.hpp"
#include "sqlock/lock_info.hpp"
#include "sqlock/transaction.hpp"

namespace sqlock::detail {

class Connection {
  public:
    virtual ~Connection() = default;

    using clock = std::chrono::steady_clock;

    /// Bounds the operations that follow until reset with time_point::max():
    /// each gives up by `deadline` (a server that has not answered:
    /// errc::connection and the connection is abandoned; SQLite's busy wait:
    /// errc::busy). Tighter than the backend's own bounds, never looser. The
    /// heartbeat uses it so a renewal never outlasts its turn.
    virtual void set_deadline(clock::time_point deadline) { (void)deadline; }

    /// Creates the table and index if missing.
    virtual void init_schema() = 0;

    /// Adds to tables made by an older sqlock the columns they lack that
    /// locking never reads (the queue's `joined`, for the oldest waiter's
    /// age), where this user may; rows already there count as joined now.
    /// Returns nullopt when none is missing any more, else why one still is
    /// and what to do (a user that may not alter the table, a table in use
    /// past a short wait), for Locker::init()'s note. Throws as any
    /// operation does for anything else (the core notes it too, but for a
    /// lost connection).
    virtual std::optional<std::string> upgrade_schema() = 0;

    /// Checks, without changing anything, that this connection may do what
    /// locking needs (read and write the table); throws errc::configuration
    /// naming what is missing. For Locker::init(), so that `sqlock init`
    /// does not call a table ready that the next `run` cannot use.
    virtual void check_access() = 0;

    /// One attempt at `claim` as `locked_by`, each row to expire `lease`
    /// from the database's now. One atomic step, all or nothing:
    /// - an exclusive entry inserts the name's row, or takes over its
    ///   expired row (a new id);
    /// - a slot entry takes the lowest free (or expired) slot row
    ///   slot_lockstring(name, n) among 1..capacity, tried always in that
    ///   order (concurrent callers cannot livelock);
    /// - a shared entry inserts the name's marker, or takes over an expired
    ///   row of the name, or extends the live marker to cover the new
    ///   lease; then inserts its holder row `shared_row`.
    /// A name held live stops the claim (unless held shared and asked
    /// shared); so does a live waiter queued for one of its names that goes
    /// first (Claim::before; `queued` then), the check part of the same
    /// step. A set's ids are drawn in the order of its names, each after
    /// that name's turn, as one name's. Not taken: nothing was written, and
    /// `holders` says what was in the way when that is cheap to know.
    virtual ClaimResult acquire(const Claim& claim, duration lease,
                                const std::string& locked_by) = 0;

    /// Renews the rows `ids` (ids[i] is held.entries[i].row()'s) held by
    /// `locked_by` to expire `lease` from now, only those still live, a
    /// shared entry's only while its marker is live (which is then extended
    /// to cover it); a set's in one transaction. Returns the rows it
    /// renewed: a claim whose rows are not all returned is lost.
    virtual std::vector<Row> renew(const Claim& held, const std::vector<std::int64_t>& ids,
                                   const std::string& locked_by, duration lease) = 0;

    /// Releases the rows `ids` (as renew()) held by `locked_by`: deletes
    /// each, or with min_hold > 0 instead shortens its expiry to created +
    /// min_hold while that is still ahead (`kept`); a shared entry's marker
    /// is shrunk to the latest of the other live holders' expiries, or
    /// deleted with the last. A set's in one transaction. Wakes the waiters
    /// of the names freed (a backend that pushes releases tells other
    /// hosts). Counts the rows that were not ours any more.
    virtual ClaimRelease release(const Claim& held, const std::vector<std::int64_t>& ids,
                                 const std::string& locked_by, duration min_hold) = 0;

    /// Whether every commit the server acknowledged survives a failover to
    /// another host of the URL, so that a row of ours, once there, is gone
    /// only by a delete: true on a synchronous cluster (Galera). False where
    /// a crash failover to an asynchronous standby can lose committed rows
    /// (PostgreSQL), which is also the safe default.
    virtual bool failover_keeps_commits() const { return false; }

    /// What a purge batch clears beyond the expired rows the expiry index
    /// finds (purge_expired_batch()), given how many of `batch` those were:
    /// returns how many more lock rows it deleted. SQLite deletes rows whose
    /// expiry another program wrote in a form its index cannot order;
    /// MariaDB clears its fencing register's unused rows (no lock rows).
    virtual std::size_t purge_more(std::size_t /*batch*/, std::size_t /*purged*/) { return 0; }

    /// The shortest pause a batched purge leaves between its batches
    /// (batch_pacing.hpp): longer than the longest sleep of this backend's
    /// busy wait, so that a waiter asleep during a batch wakes inside the
    /// pause, not in the next batch. None for servers, whose waiters queue
    /// on the row lock instead of sleeping.
    virtual duration min_batch_pause() const { return duration::zero(); }

    /// Deletes the row with this id and exact locked_by; returns whether it
    /// did. `lockstring` as for release(). Not a release: on Galera a
    /// holder's release marks MariaDB's fencing register, so that a release
    /// sent again can tell it went through; a force release must not, or
    /// the holder's own release afterwards would read as done, not lost.
    virtual bool delete_exact(std::int64_t id, const std::string& lockstring,
                              const std::string& locked_by) = 0;

    // Everything beyond the lock's own life (run history, once-per windows,
    // pauses, counts) is written once in the core over query(): each
    // backend supplies the SQL of every Query as data (its StatementSet,
    // statement_set.hpp) and runs it here.

    /// Runs this backend's SQL for `key` with `params` bound (never spliced
    /// into the text as they are), in one round trip, as one transaction
    /// when its QueryText says so, and returns its rows and how many rows it
    /// changed. Errors as every operation's: sqlock::error with the
    /// backend's code, the message saying describe_query(key, params).
    virtual Rows query(Query key, const std::vector<Value>& params) = 0;

    // The reads of lock rows, over query() (Query::lock_row, lock_rows,
    // lock_held): the same on every backend, only the SQL differs.

    /// The row named `lockstring`, if any, live or not.
    std::optional<Row> find(const std::string& lockstring);
    /// Rows whose lockstring starts with `prefix` (all if empty), only the
    /// expired ones when `expired_only`, by name (bytewise).
    std::vector<Row> list(const std::string& prefix, bool expired_only);
    /// True if the row (id, locked_by) exists and has not expired.
    bool is_held(std::int64_t id, const std::string& locked_by);
    /// Deletes at most `batch` expired rows in one short transaction
    /// (Query::purge_locks), then what purge_more() clears. When
    /// has(SideTable::runs), the runs of the rows it deletes that are still
    /// marked running end in the same transaction: outcome lost, ended at
    /// the row's expiry (Query::purge_locks_and_runs).
    std::size_t purge_expired_batch(std::size_t batch);

    // The tables init() creates beside the lock table (common_side_tables,
    // table_family.hpp). A table seen stays known for the connection's life
    // (tables are never dropped); one not seen is looked for again, all at
    // once (Query::side_tables), since `sqlock run` needs several and each
    // look is a round trip on a connection that may be new.

    /// Whether side table `side` (one of common_side_tables) exists:
    /// Locker::init() creates them. Every acquisition asks for the queue, so
    /// a look that found none is trusted for 30 s.
    bool has(SideTable side);
    /// Forgets that a look found no queue: init_schema() may just have made it.
    void forget_missing_queue() noexcept { queue_looked_ = {}; }

  protected:
    /// Whether `table`, which Query::side_tables did not find, is there all
    /// the same. The default trusts the catalog the statement reads, which
    /// lists every table. MariaDB's information_schema lists only the tables
    /// this user has a privilege on: a job whose user may not read the
    /// pauses table must fail on it, not read "nothing paused", so MariaDB
    /// probes the table itself.
    virtual bool unlisted_side_table_exists(SideTable table) {
        (void)table;
        return false;
    }

  private:
    void learn_side_tables();

    std::array<bool, side_table_count> known_{};  // by SideTable: seen to exist
    clock::time_point queue_looked_{};            // when a look last found no queue
};

/// Push notifications of releases, for backends that have them (PostgreSQL
/// LISTEN/NOTIFY). Used from a single thread, but for interrupt().
class ReleaseListener {
  public:
    virtual ~ReleaseListener() = default;
    /// Starts listening; after it returns, every later release is reported,
    /// and every wake-up sent to `inbox`: a name (a channel) that this
    /// process alone listens on, which a waiter leaves in its queue row
    /// (wait_queue.hpp) so that the one ahead of it, leaving, wakes it.
    virtual void listen(const std::string& inbox) = 0;
    /// Waits up to `timeout`, or until interrupt(); returns the lockstrings
    /// released meanwhile (empty on timeout). Throws sqlock::error on
    /// connection failure.
    virtual std::vector<std::string> await(duration timeout) = 0;
    /// Says, for as long as this listener lives, that a waiter sleeps on
    /// `name` (`on`), or no longer does. A backend may push only the releases
    /// of names some listener waits for, and only to those listeners; once
    /// this returns, every release of `name` is reported. Throws
    /// sqlock::error on connection failure.
    virtual void waiting(const std::string& name, bool on) = 0;
    /// Makes the running await() return at once (or the next one, if none
    /// runs). The one call that may come from any thread.
    virtual void interrupt() noexcept = 0;
};

/// How the first in line polls a name when nothing pushes its release: the
/// first look `first` after an attempt, each next one `growth` times later
/// (with jitter), up to 25 ms (100 ms for a table without a queue).
struct PollSchedule {
    std::chrono::microseconds first{1000};
    double growth = 2.0;
};

class Backend {
  public:
    virtual ~Backend() = default;
    /// A server's default: each look is a round trip. Looking from 0.25 ms,
    /// growing 1.5x, did not shorten MariaDB's hand-off (8 processes taking
    /// turns: p50 2.7-3.0 ms either way) and costs more round trips.
    virtual PollSchedule poll_schedule() const { return {}; }
    virtual std::unique_ptr<Connection> connect() = 0;
    /// Null for backends that cannot push release events; waiters then poll
    /// with capped exponential backoff and jitter.
    virtual std::unique_ptr<ReleaseListener> listen() { return nullptr; }
    /// Makes the database itself exist, for Locker::init(). Only file-based
    /// backends have anything to do; a server's database is created by its
    /// administrator.
    virtual void create_database() {}
    virtual std::string name() const = 0;
    /// The guard (sqlock/transaction.hpp) of lock row `id` held by
    /// `locked_by`, named `name`; `marker` is a shared hold's marker row,
    /// else empty. The default: errc::configuration (no guard here).
    virtual GuardStatement guard_statement(std::int64_t id, const std::string& locked_by,
                                           const std::string& marker,
                                           const std::string& name) const;
    /// One attempt at sqlock::lock_transaction() on the caller's open `tx`:
    /// the fencing id when `name` was taken until `tx` ends, nullopt when it
    /// is held, `tx` usable either way. Waits at most `wait` for a writer
    /// of the name that has not committed yet. `own` is a connection of the
    /// Locker's own, for what must not read `tx`'s snapshot. The default:
    /// errc::configuration.
    virtual std::optional<std::int64_t> try_lock_transaction(Transaction& tx, Connection& own,
                                                             const std::string& name,
                                                             const std::string& locked_by,
                                                             duration lease, duration wait);
    /// Adds what sqlock::diagnose() reports about this backend's path to the
    /// database. The default suits a backend without a server or pushes.
    virtual void diagnose(Diagnosis& out) {
        out.facts.push_back(
            {"wake-ups",
             "polled by the first in line (1 ms doubling to 25 ms, with jitter; to 100 ms "
             "without a queue table); "
             "releases in this process wake at once"});
    }
};

}  // namespace sqlock::detail
