// sqlock::Locker — the front door: a lock table in a database, chosen by
// URL; the lock kinds and the admin calls.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "sqlock/lock.hpp"
#include "sqlock/lock_info.hpp"
#include "sqlock/lock_set.hpp"
#include "sqlock/options.hpp"
// The types over a Locker's session, for the members kept for one release.
#include "sqlock/doctor.hpp"
#include "sqlock/leadership.hpp"
#include "sqlock/pauses.hpp"
#include "sqlock/run_history.hpp"
#include "sqlock/transaction.hpp"

namespace sqlock {

namespace detail {
struct LockerState;
struct Access;
}  // namespace detail

/// Locker
///
/// Opens the lock table named by a URL:
///   - `sqlite:///abs/path/locks.db`, `sqlite:relative/path.db` (embedded);
///   - `postgresql://user:pass@host:port/db?...` or `postgres://...`, passed
///     to libpq as it is (PG* environment variables and ~/.pgpass apply),
///     except sqlock's own `pooler=transaction|statement|session|none`,
///     which says a PgBouncer is in front (docs/postgres-production.md);
///   - empty: `$SQLOCK_DB`, else the embedded default
///     `${XDG_STATE_HOME:-$HOME/.local/state}/sqlock/locks.db`.
///
/// Every time value comes from the database clock, so clients with skewed
/// clocks agree. Connections are opened lazily; a bad URL or unknown scheme is
/// reported by the constructor.
///
/// A Locker is a session with the lock table: its connections, the wake-ups
/// of waiters, the locks it holds. It takes the lock kinds (locks, semaphore
/// slots, shared holds, sets) and answers the admin calls. What is built over
/// the table beside the locks stands on the session in small types, as
/// etcd's Election and Mutex stand on a Session: RunHistory
/// (run_history.hpp), Pauses (pauses.hpp), Election (leadership.hpp), and
/// the free functions diagnose() (doctor.hpp) and lock_transaction()
/// (transaction.hpp).
///
/// Thread safety: a Locker may be shared by any number of threads. It keeps a
/// small pool of connections (LockerOptions::pool_size), handed out most
/// recently used first to threads in the order they asked; a thread that
/// cannot get one within pool_timeout gets `errc::timeout` naming the pool's
/// size and how many connections are busy. Locks, and the types over its
/// session, may outlive their Locker.
///
///     sqlock::Locker locker("postgresql://app@db.internal/ops");
///     if (auto lock = locker.try_lock("nightly-report")) {
///         sqlock::RunHistory history(locker);
///         const std::int64_t run = history.start_run(*lock);
///         history.finish_run(*lock, run, {});  // succeeded
///     }
class Locker {
  public:
    /// Throws `errc::invalid_argument` for a URL that cannot be read (no
    /// scheme, an unknown one, a malformed URL or parameter) or a bad table
    /// name, `errc::configuration` for a backend that was not built in or
    /// whose module does not load.
    explicit Locker(const std::string& url = {}, LockerOptions options = {});
    Locker(Locker&&) noexcept;
    Locker& operator=(Locker&&) noexcept;
    Locker(const Locker&) = delete;
    Locker& operator=(const Locker&) = delete;
    ~Locker();

    /// The URL used when none is given: $SQLOCK_DB, else the embedded default.
    static std::string default_url();

    /// Creates the lock table and its index if missing (idempotent), then
    /// checks that this connection may use it. Throws errc::configuration
    /// when it may not (on PostgreSQL naming the missing privileges, SQLSTATE
    /// 42501; on SQLite a read-only file), or as any other operation does.
    /// Also adds what tables made by an older sqlock lack for monitoring
    /// alone (the queue's join times): where this user may not alter them
    /// (PostgreSQL: only the owner may; MariaDB: ALTER), they stay as they
    /// are, every lock works, and the returned notes, one line each, say
    /// what is missing and what to do. Empty when nothing is left to do.
    std::vector<std::string> init();

    /// Takes `name` if it is free or its holder's lease has run out (an expired
    /// row is taken over atomically, with a new id). Returns nullopt if held.
    /// Throws `errc::invalid_argument` for a bad name or option; with
    /// `reentrant` off, `errc::busy` if this thread already holds it here.
    std::optional<Lock> try_lock(const std::string& name, const LockOptions& options = {});

    /// Like try_lock(), waiting up to `options.wait` (or forever with
    /// `wait_forever`). Throws `errc::busy` naming the holder when the wait is
    /// zero, `errc::timeout` naming the holder and its expiry when it ran out.
    Lock lock(const std::string& name, const LockOptions& options = {});

    /// Counting semaphore: takes the lowest free slot among 1..capacity of
    /// `name` (each slot is a row "name#N"). Returns nullopt if all are held.
    std::optional<Lock> try_acquire_slot(const std::string& name, int capacity,
                                         const LockOptions& options = {});
    /// Like try_acquire_slot(), waiting as lock() does.
    Lock acquire_slot(const std::string& name, int capacity, const LockOptions& options = {});

    /// The most names a lock set takes.
    static constexpr std::size_t max_set_size = 256;

    /// Takes every name of `names` at once, or none: one transaction writes
    /// a row for each (or takes over its expired one), each with its own
    /// fencing id, so no other client ever sees part of the set. Repeated
    /// names count once. Returns nullopt if any name is held, or promised
    /// to callers waiting in line for it (a set takes no place in lines; it
    /// lets them go first). `options` apply to the whole set (one lease,
    /// one heartbeat renewing every row in one statement); `reentrant`
    /// does not: a set is never re-entrant. Throws `errc::invalid_argument`
    /// for no names, more than max_set_size, or a bad name or option;
    /// `errc::busy` if this thread holds one of the names through this
    /// Locker.
    std::optional<LockSet> try_lock_all(const std::vector<std::string>& names,
                                        const LockOptions& options = {});

    /// Like try_lock_all(), waiting up to `options.wait` (or forever) while
    /// holding nothing, woken by the release of any of the names: sets that
    /// overlap, in any order, never deadlock. Throws `errc::busy` (a zero
    /// wait) or `errc::timeout` naming every name in the way and its
    /// holder; the error's holder() is the first of them.
    LockSet lock_all(const std::vector<std::string>& names, const LockOptions& options = {});

    /// try_lock_all() and lock_all() with a mode for each name: a set may
    /// hold some names shared and others exclusively, all in the one
    /// transaction. `options.mode` must be left exclusive (the members say
    /// theirs). A name given twice in different modes, or held shared
    /// beyond its length limit (104 bytes), is `errc::invalid_argument`.
    /// (A vector of SetMember binds to the template overloads; a braced
    /// list of names alone still means the overloads above.)
    std::optional<LockSet> try_lock_all(std::initializer_list<SetMember> members,
                                        const LockOptions& options = {}) {
        return try_lock_members(members, options);
    }
    LockSet lock_all(std::initializer_list<SetMember> members, const LockOptions& options = {}) {
        return lock_members(members, options);
    }
    template <typename Members,
              std::enable_if_t<std::is_same_v<Members, std::vector<SetMember>>, int> = 0>
    std::optional<LockSet> try_lock_all(const Members& members, const LockOptions& options = {}) {
        return try_lock_members(members, options);
    }
    template <typename Members,
              std::enable_if_t<std::is_same_v<Members, std::vector<SetMember>>, int> = 0>
    LockSet lock_all(const Members& members, const LockOptions& options = {}) {
        return lock_members(members, options);
    }

    /// Deletes expired rows in batches of `batch_size` (each its own short
    /// transaction, paced so acquirers get at least half of the time) and
    /// returns how many were deleted.
    std::size_t purge_expired(std::size_t batch_size = 500);

    /// All rows, or those whose name starts with `prefix`, ordered by name.
    std::vector<LockInfo> list(const std::string& prefix = {});
    /// Only the expired rows (what purge_expired() would delete now).
    std::vector<LockInfo> list_expired();
    /// How many rows are held and how many expired, counted by the
    /// database (one aggregate query, for `sqlock metrics`).
    LockCounts lock_counts();
    /// Every name with a live holder, a waiter in line or an election, and
    /// the table's counts, in one look (a few aggregate queries; the rows
    /// read are the live ones, never the expired): for `sqlock metrics`.
    LockActivity lock_activity();
    /// The row named `name` (a lockstring), if any.
    std::optional<LockInfo> show(const std::string& name);
    /// The live shared holders of `name`, each its own row (by lockstring);
    /// empty when the name is not held shared.
    std::vector<LockInfo> shared_holders(const std::string& name);

    /// How many callers wait in line for `name` (a lock's, or a
    /// semaphore's), served in arrival order (docs/waiting.md); 0 when the
    /// table has no queue (made by init()).
    std::size_t queue_length(const std::string& name);

    /// Releases `name` if its owner token is `token`; returns the row it
    /// deleted. nullopt if there is no such row. Throws `errc::lost` if the
    /// row belongs to another holder.
    std::optional<LockInfo> release(const std::string& name, const std::string& token);
    /// Renews the lease of `name`, held under owner token `token`, to end
    /// `lease` from now by the database's clock (for locks taken by another
    /// process, e.g. `sqlock acquire`); returns the renewed row. nullopt if
    /// there is no such row. Throws `errc::lost` if the row belongs to another
    /// holder or its lease ran out before the renewal (an expired lock is not
    /// revived: someone may be taking it over), `errc::invalid_argument` for
    /// a bad name, token or lease.
    std::optional<LockInfo> renew(const std::string& name, const std::string& token,
                                  duration lease);
    /// Deletes `name` whoever holds it; returns the row it deleted, if any.
    std::optional<LockInfo> force_release(const std::string& name);

    /// The database URL with any password replaced by "***".
    std::string url() const;
    /// "sqlite", "postgresql" or "mariadb".
    std::string backend_name() const;
    /// The table name as given.
    const std::string& table() const;

    // Kept for one release: the calls that moved to the types over the
    // Locker's session. Each does what the call it names does.

    /// Kept for one release; use RunHistory::once_per_window().
    OncePerWindow once_per_window(const Lock& lock, duration length,
                                  duration offset = duration::zero(), bool any_outcome = false);
    /// Kept for one release; use RunHistory::window_rule.
    using once_per_rule = RunHistory::window_rule;
    /// Kept for one release; use RunHistory::once_per_window().
    OncePerWindow once_per_window(const Lock& lock, const once_per_rule& rule,
                                  bool any_outcome = false);
    /// Kept for one release; use RunHistory::start_run().
    std::int64_t start_run(const Lock& lock, RunStart info = {});
    /// Kept for one release; use RunHistory::start_run_unless_paused().
    RunStartOutcome start_run_unless_paused(const Lock& lock, RunStart info = {});
    /// Kept for one release; use RunHistory::finish_run().
    run_outcome finish_run(const Lock& lock, std::int64_t run_id, const RunEnd& end);
    /// Kept for one release; use RunHistory::record_skip().
    std::int64_t record_skip(const Lock& lock, run_outcome outcome, RunStart info = {});
    /// Kept for one release; use RunHistory::since_rule.
    using since_rule = RunHistory::since_rule;
    /// Kept for one release; use RunHistory::predecessors().
    Predecessors predecessors(const std::vector<std::string>& names, duration within);
    /// Kept for one release; use RunHistory::predecessors().
    Predecessors predecessors(const std::vector<std::string>& names, const since_rule& rule);
    /// Kept for one release; use RunHistory::runs().
    std::vector<RunRecord> history(const HistoryQuery& query = {});
    /// Kept for one release; use RunHistory::job_status().
    JobStatus job_status(const std::string& name);
    /// Kept for one release; use RunHistory::run_counts().
    std::vector<RunCount> run_counts();
    /// Kept for one release; use RunHistory::prune().
    std::size_t prune_history(duration retention, std::size_t batch_size = 500);
    /// Kept for one release; use RunHistory::count_prunable().
    std::size_t count_prunable_history(duration retention);
    /// Kept for one release; use Pauses::pause().
    PauseInfo pause(const std::string& name, std::optional<duration> for_ = std::nullopt,
                    const std::string& reason = "");
    /// Kept for one release; use Pauses::resume().
    bool resume(const std::string& name);
    /// Kept for one release; use Pauses::find().
    std::optional<PauseInfo> paused(const std::string& name);
    /// Kept for one release; use Pauses::all().
    std::vector<PauseInfo> pauses();
    /// Kept for one release; use Pauses::purge_expired().
    std::size_t purge_expired_pauses(std::size_t batch_size = 500);
    /// Kept for one release; use Pauses::count_expired().
    std::size_t count_expired_pauses();
    /// Kept for one release; use Election::campaign().
    Leadership campaign(const std::string& name, const std::string& value = {},
                        const LockOptions& options = {});
    /// Kept for one release; use Election::leader().
    std::optional<LeaderInfo> leader(const std::string& name);
    /// Kept for one release; use Election::observe().
    LeaderWatch observe(const std::string& name, const ObserveOptions& options = {});
    /// Kept for one release; use sqlock::diagnose() (doctor.hpp).
    Diagnosis diagnose();
    /// Kept for one release; use sqlock::lock_transaction() (transaction.hpp).
    std::int64_t lock_transaction(Transaction& tx, const std::string& name,
                                  duration wait = duration::zero());

  private:
    friend struct detail::Access;

    std::optional<LockSet> try_lock_members(const std::vector<SetMember>& members,
                                            const LockOptions& options);
    LockSet lock_members(const std::vector<SetMember>& members, const LockOptions& options);

    std::shared_ptr<detail::LockerState> state_;
};

}  // namespace sqlock
