// sqlock::Locker — the front class: a lock table in a database, chosen by URL.
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

#include "sqlock/diagnosis.hpp"
#include "sqlock/leadership.hpp"
#include "sqlock/lock.hpp"
#include "sqlock/lock_info.hpp"
#include "sqlock/lock_set.hpp"
#include "sqlock/options.hpp"
#include "sqlock/pause.hpp"
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
/// Thread safety: a Locker may be shared by any number of threads. It keeps a
/// small pool of connections (LockerOptions::pool_size), handed out most
/// recently used first to threads in the order they asked; a thread that
/// cannot get one within pool_timeout gets `errc::timeout` naming the pool's
/// size and how many connections are busy. Locks may outlive their Locker.
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

    // Leader election (sqlock/leadership.hpp): the holder of a name's lock
    // leads. Values live in `<table>_leaders`, created by init() like the
    // lock table (errc::configuration names `sqlock init` when it is
    // missing).

    /// Waits, as lock() does (`options.wait`, `wait_forever`, the fair
    /// line), until this process leads `name`, then publishes `value` (UTF-8
    /// without control characters, at most max_leader_value_bytes). The
    /// value is also stored in the lock row's metadata, so readers see it
    /// with the leader from the first moment. Throws as lock() does (busy,
    /// timeout), and errc::invalid_argument for a bad value or a shared
    /// `options.mode`.
    Leadership campaign(const std::string& name, const std::string& value = {},
                        const LockOptions& options = {});
    /// The live leader of `name`, or nullopt when nobody leads (no live
    /// exclusive holder of the name).
    std::optional<LeaderInfo> leader(const std::string& name);
    /// Watches the leadership of `name` (see LeaderWatch). Connects nothing
    /// yet: the first next() reads. Throws errc::invalid_argument for a bad
    /// name or poll interval.
    LeaderWatch observe(const std::string& name, const ObserveOptions& options = {});

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

    // Run history (sqlock/run_history.hpp): a table `<table>_runs` beside
    // the lock table, created by init() like it. These throw
    // errc::configuration when it is missing (a table made before sqlock
    // had a history: run init() once), and as any other operation does.

    /// The once-per window of `length`, shifted by `offset`, that holds the
    /// database's now (UTC, aligned on the Unix epoch: 1d is a UTC day), and
    /// whether it is done for `lock`'s name: a run recorded for this window
    /// succeeded (with `any_outcome`, one ended in any way, lost included).
    /// Decide while holding `lock` and record the run's end before
    /// releasing it (finish_run): then two holders can never both run one
    /// window, whatever their clocks. Throws errc::invalid_argument for a
    /// window that is not positive or over 366 days, an offset that is
    /// negative or not shorter than the window, or a released Lock or one
    /// from another Locker.
    OncePerWindow once_per_window(const Lock& lock, duration length,
                                  duration offset = duration::zero(), bool any_outcome = false);

    /// Draws the window of a once-per decision around the database's now:
    /// [start, end) in milliseconds since the Unix epoch.
    using once_per_rule = std::function<std::pair<std::int64_t, std::int64_t>(std::int64_t now_ms)>;
    /// As above, with the window `rule` draws around the database's now:
    /// windows that are not a fixed length from the epoch, such as days in
    /// a time zone (`sqlock run --tz`), still judged by the database's
    /// clock. Throws errc::invalid_argument when the window it draws does
    /// not hold now or is longer than 366 days, and as above.
    OncePerWindow once_per_window(const Lock& lock, const once_per_rule& rule,
                                  bool any_outcome = false);

    /// Records that a run starts under `lock` (outcome running); returns
    /// the run's id for finish_run(). Empty fields of `info` are this
    /// process's (host, pid, user, program).
    std::int64_t start_run(const Lock& lock, RunStart info = {});

    /// Reads the pause in force for `lock`'s name and, only when there is
    /// none, records that a run starts under `lock` as start_run() does, in
    /// one round trip (see RunStartOutcome). Without a pauses table (a lock
    /// table made before sqlock had pauses) nothing is paused, as paused()
    /// says, and the run is recorded. Throws errc::configuration when the
    /// history table is missing (run init() or `sqlock init`),
    /// errc::invalid_argument for a released Lock or one from another
    /// Locker, and as any other operation does.
    RunStartOutcome start_run_unless_paused(const Lock& lock, RunStart info = {});

    /// Records how run `run_id` ended, before `lock` is released. Returns
    /// what was recorded: `end.outcome`, or `lost` when the lock was no
    /// longer held at that moment (its lease ran out, it was taken over or
    /// force-released), or when the run was no longer marked running (the
    /// reaper had recorded it lost, or its end was recorded already).
    /// A failure throws: the end is then not recorded, and the run reads
    /// as lost once its lease has run out.
    run_outcome finish_run(const Lock& lock, std::int64_t run_id, const RunEnd& end);

    /// Records that the job of `lock`'s name was not run, as a run that
    /// started and ended now with `outcome`, which must be a skip
    /// (after_failed, after_pending; see is_skip()); returns its id. Empty
    /// fields of `info` are this process's, as for start_run(). Throws
    /// errc::invalid_argument for another outcome, a released Lock or one
    /// from another Locker, and as start_run() does.
    std::int64_t record_skip(const Lock& lock, run_outcome outcome, RunStart info = {});
    /// Draws the cutoff of a predecessors() look from the database's now
    /// (ms since the Unix epoch): a success must have ended at or after it.
    using since_rule = std::function<std::int64_t(std::int64_t now_ms)>;
    /// How the jobs `names` stand for a job that runs after them (`sqlock
    /// run --after`), in one look at the history judged by the database's
    /// clock: each job's newest run that ran decides (see
    /// predecessor_state); a success counts when it ended within `within`
    /// of now. Throws errc::invalid_argument for no names, a bad name or a
    /// `within` that is not positive or over 366 days,
    /// errc::configuration without a history table.
    Predecessors predecessors(const std::vector<std::string>& names, duration within);
    /// As above, a success counting when it ended at or after the cutoff
    /// `rule` draws (a once-per window's start, say).
    Predecessors predecessors(const std::vector<std::string>& names, const since_rule& rule);
    /// Recorded runs, newest first (see HistoryQuery).
    std::vector<RunRecord> history(const HistoryQuery& query = {});

    /// What monitoring asks about job `name` (see JobStatus): its newest
    /// success however long ago, its newest finished run and a running one
    /// among the newest few, and the database's now. A few rows are read
    /// whatever the size of the history. Throws errc::configuration when
    /// there is no history table.
    JobStatus job_status(const std::string& name);

    /// Runs in the history by name and outcome, counted by the database (one
    /// aggregate query), ordered by name: for `sqlock metrics`.
    std::vector<RunCount> run_counts();

    /// Deletes runs started more than `retention` ago in batches of
    /// `batch_size`, paced as purge_expired() is; returns how many. Never
    /// deletes a run still going on under a live lock. 0 when there is no
    /// history table.
    std::size_t prune_history(duration retention, std::size_t batch_size = 500);

    /// How many runs prune_history(retention) would delete now, counted by
    /// the database; nothing is deleted. 0 when there is no history table.
    std::size_t count_prunable_history(duration retention);

    // Pauses (sqlock/pause.hpp): a table `<table>_pauses` beside the lock
    // table, created by init() like it. Times are the database's, UTC.

    /// Pauses job `name` on every host: Locker::paused() reports it until
    /// resume(), or until `for_` has passed on the database's clock when
    /// given. Pausing a paused name replaces its pause (who, why, until).
    /// Does not touch a lock that is held: a running job goes on; the next
    /// `sqlock run` sees the pause. Returns the pause as stored. Throws
    /// errc::invalid_argument for a bad name, a `for_` that is not positive
    /// or over 366 days, or a reason over 1024 bytes or not UTF-8;
    /// errc::configuration when the pauses table is missing (run init()).
    PauseInfo pause(const std::string& name, std::optional<duration> for_ = std::nullopt,
                    const std::string& reason = "");

    /// Ends the pause of `name`; returns whether there was one in force
    /// (an expired one is deleted too, and counts as none). Throws as
    /// pause() does.
    bool resume(const std::string& name);

    /// The pause of `name` in force now, if any. A table made before sqlock
    /// had pauses (no pauses table) has none: nullopt, not an error, so
    /// `run` keeps working on old deployments.
    std::optional<PauseInfo> paused(const std::string& name);

    /// Every pause in force now, by name; empty without a pauses table.
    std::vector<PauseInfo> pauses();

    /// Deletes the pauses that have ended by themselves (their `until` has
    /// passed on the database's clock; they are ignored everywhere already)
    /// in batches of `batch_size`, paced as purge_expired() is; returns how
    /// many. A pause renewed meanwhile stays. Safe with any number of
    /// reapers at once: each row is deleted by one. 0 when there is no
    /// pauses table (a lock table made before sqlock had pauses).
    std::size_t purge_expired_pauses(std::size_t batch_size = 500);

    /// How many pauses purge_expired_pauses() would delete now, counted by
    /// the database; nothing is deleted. 0 when there is no pauses table.
    std::size_t count_expired_pauses();

    /// Probes the database the way `sqlock doctor` reports it: server
    /// version, primary or standby, a pooler in transaction mode, whether
    /// waiters are woken by notifications or poll, the clock difference, the
    /// table and its grants. Read-only; opens its own short-lived
    /// connections (never the pool's) and takes a few seconds at most.
    /// Throws `errc::connection` if the database cannot be reached at all;
    /// everything else is reported in the result. Thread-safe.
    Diagnosis diagnose();

    /// Takes `name` inside the caller's open transaction `tx` on this
    /// Locker's database, held exactly until `tx` commits or rolls back,
    /// leaving no row behind (like PostgreSQL's pg_advisory_xact_lock, but
    /// excluding every holder of the name in the lock table: sqlock's locks,
    /// sets and shared holds, and DBIx::Locker programs, which wait for `tx`
    /// to end). Exclusive only; no heartbeat, no release: the transaction is
    /// the lease. Returns the fencing id the name got. Waits up to `wait`
    /// (zero: one attempt): errc::busy or errc::timeout when it is held, and
    /// `tx` stays usable. One refusal needs a rollback: errc::busy saying
    /// "roll it back", when the name was taken in the instant between
    /// sqlock's look and its insert and `tx` now holds a lock the holder
    /// needs (SQLite's write lock; on MariaDB the row's). Throws
    /// errc::invalid_argument for a bad name or wait, a `tx` of another
    /// backend, or no transaction open. Does not take a place in the line of
    /// waiters (waiting.md). On PostgreSQL use READ COMMITTED: docs/
    /// guarded-writes.md says what each backend's transaction holds.
    std::int64_t lock_transaction(Transaction& tx, const std::string& name,
                                  duration wait = duration::zero());

    /// The database URL with any password replaced by "***".
    std::string url() const;
    /// "sqlite", "postgresql" or "mariadb".
    std::string backend_name() const;
    /// The table name as given.
    const std::string& table() const;

  private:
    friend struct detail::Access;

    std::optional<LockSet> try_lock_members(const std::vector<SetMember>& members,
                                            const LockOptions& options);
    LockSet lock_members(const std::vector<SetMember>& members, const LockOptions& options);

    std::shared_ptr<detail::LockerState> state_;
};

}  // namespace sqlock
