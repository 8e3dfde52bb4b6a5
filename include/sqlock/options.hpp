// Options for acquiring locks and for opening a Locker.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "sqlock/duration.hpp"
#include "sqlock/lock_info.hpp"
#include "sqlock/observer.hpp"

namespace sqlock {

class error;

/// Called by lock() and acquire_slot() while they wait, in the waiting
/// thread: with the row in the way (for a semaphore, the slot whose lease
/// ends first; null if it was just released, or if the database could not
/// be asked: see obstacle_handler) and the time waited so far. Return false
/// to stop waiting: the call then throws `errc::timeout` (the obstacle's
/// error while the database is unavailable). An exception it throws leaves
/// the call unchanged.
using wait_progress = std::function<bool(const LockInfo* holder, duration waited)>;

/// Called by a waiting call, in the waiting thread, each time an attempt
/// met a database that is unavailable for now (error::unavailable(): it
/// could not be reached or did not answer, or it was read-only): with that
/// error and the time waited so far. The wait goes on through it, trying
/// again with a growing, jittered backoff (100 ms to 1 s), until its
/// deadline, where the call throws an error of the last obstacle's category
/// that says what it waited through. Return false to stop at once (the call
/// throws the same). An exception it throws leaves the call unchanged.
using obstacle_handler = std::function<bool(const error& obstacle, duration waited)>;

/// Called (from a heartbeat thread) when a held lock turns out to be lost.
/// Arguments: the lock's name and its id (fencing token).
using lost_handler = std::function<void(const std::string& name, std::int64_t id)>;

/// Called (from a heartbeat thread) when a held lock comes within
/// LockOptions::warn_before of Lock::valid_until() and no renewal has
/// succeeded meanwhile: stop the protected work by `valid_until`, because
/// another holder may start at that moment. Arguments: the lock's name, its
/// id, and valid_until. Called again for a later valid_until if renewals
/// succeed and then fail again. It must return promptly and must not
/// release or destroy the Lock itself (signal another thread to do that).
using expiring_handler = std::function<void(const std::string& name, std::int64_t id,
                                            std::chrono::steady_clock::time_point valid_until)>;

/// Called (from a heartbeat thread) when a renewal succeeds after one or
/// more attempts in a row had failed (no answer in time, connection lost,
/// database busy): the lease was renewed later than planned. Arguments: the
/// lock's name, its id, the failed attempts, and how much was left of the
/// lease (until Lock::valid_until()) when the successful renewal was sent:
/// how close the lock came to lapsing. It must return promptly.
using renewed_late_handler = std::function<void(const std::string& name, std::int64_t id,
                                                int failed_attempts, duration left)>;

/// How a name is held: by one holder alone, or by any number of shared
/// holders at once (readers), never both.
enum class lock_mode { exclusive, shared };

/// LockOptions
///
/// How to acquire one lock. An aggregate whose every member has a default,
/// so in C++17 set the members you need on a default-constructed value, and
/// in C++20 designated initializers read well:
/// `locker.lock("job", {.expires = 10min, .wait = 30s})`.
struct LockOptions {
    /// Lease length: the lock stops counting this long after it was taken
    /// (or last renewed). Must be > 0 and at most 366 days.
    duration expires = std::chrono::hours(1);
    /// How long lock() waits for a held lock, and through a database that
    /// is unavailable for now (a restart, a failover, a read-only spell; see
    /// on_obstacle). Zero means try once: an unavailable database then fails
    /// the call at once.
    duration wait = duration::zero();
    /// Wait without a deadline. Must be asked for explicitly; ignores `wait`.
    bool wait_forever = false;
    /// While waiting, called after each failed attempt and at least every
    /// `progress_every` (a progress line, a check for a signal).
    wait_progress on_waiting{};
    /// See `on_waiting`; must be > 0.
    duration progress_every = std::chrono::milliseconds(500);
    /// While waiting, called when an attempt meets an unavailable database
    /// (see obstacle_handler).
    obstacle_handler on_obstacle{};
    /// On release keep the row until created + min_hold, so that a redundant
    /// host whose cron fires a little later does not run a fast job again.
    duration min_hold = duration::zero();
    /// Renew the lease from background threads, every sixth of its length
    /// (a failed renewal is retried sooner). Each renewal is bounded by that
    /// interval (and LockerOptions::db_timeout): one that has not answered
    /// in time counts as failed and never holds the heartbeat up.
    bool heartbeat = false;
    /// Called once if the heartbeat finds the lock lost: the row is gone or
    /// taken over, or valid_until() passed without a successful renewal (from
    /// then on another holder may take it).
    lost_handler on_lost{};
    /// With heartbeat: called when valid_until() is `warn_before` away and
    /// renewals have been failing (see expiring_handler).
    expiring_handler on_expiring{};
    /// With heartbeat: called when a renewal succeeds after failed ones
    /// (see renewed_late_handler).
    renewed_late_handler on_renewed_late{};
    /// How long before valid_until() on_expiring is called. Zero means a
    /// quarter of the lease. Must be less than the lease.
    duration warn_before = duration::zero();
    /// Allow the same thread to take a lock it already holds through the same
    /// Locker; nested holds are counted and the last release releases.
    /// Without it such an attempt fails fast with `errc::busy`.
    bool reentrant = false;
    /// While waiting, the caller's place in the queue of waiters (served in
    /// arrival order; see docs/waiting.md) is a row with a lease of this
    /// length, renewed every third of it: a waiter that dies, freezes or is
    /// cut off leaves the line when it runs out, so it stalls a free name
    /// at most this long. Zero (the default): the lock's own lease
    /// (`expires`), at most 15 s and at least 100 ms, so that a stalled
    /// waiter never holds a name up longer than a stalled holder would.
    /// Otherwise between 100 ms and 1 h.
    duration queue_lease = duration::zero();
    /// `shared`: hold the name together with other shared holders, never
    /// with an exclusive one. A waiting exclusive request is not starved:
    /// shared requests that come after it wait behind it (docs/shared-locks.md).
    /// Plain locks only, names of at most 104 bytes.
    lock_mode mode = lock_mode::exclusive;
    /// Extra caller metadata stored in `locked_by` under "meta".
    std::map<std::string, std::string> metadata{};
};

/// LockerOptions
///
/// How to open a Locker.
struct LockerOptions {
    /// Lock table name: an SQL identifier, optionally schema-qualified on
    /// PostgreSQL ("ops.locks"). Validated, always quoted.
    std::string table = "sqlock_locks";
    /// Most database connections the Locker opens at once.
    std::size_t pool_size = 4;
    /// How long a thread waits for a pooled connection before `errc::timeout`.
    duration pool_timeout = std::chrono::seconds(30);
    /// Longest wait for a database server to answer (PostgreSQL): connecting
    /// (libpq's connect_timeout, at least 2 s), and each statement, after
    /// which the connection is abandoned and the call fails with
    /// `errc::connection`. Also sets TCP keepalives and tcp_user_timeout, so
    /// a dead peer is noticed. Settings in the URL itself take precedence
    /// over the derived libpq ones. A heartbeat bounds its renewals more
    /// tightly still (see LockOptions::heartbeat). SQLite's busy wait has its
    /// own bound, the URL's `busy_timeout`. Must be > 0.
    duration db_timeout = std::chrono::seconds(10);
    /// Create the table on first use. Defaults to on for the embedded SQLite
    /// default database and off elsewhere (there, run `sqlock init`).
    enum class auto_init_mode { when_default, always, never };
    auto_init_mode auto_init = auto_init_mode::when_default;
    /// Told of every acquisition, renewal, release and loss of this
    /// Locker's single-name locks (sqlock/observer.hpp); none by default.
    /// Shared with the Locks handed out, which may outlive the Locker.
    std::shared_ptr<LockObserver> observer{};
};

}  // namespace sqlock
