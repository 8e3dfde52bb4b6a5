// The backend contract: what every database must do for sqlock.
//
// A Backend is created once per Locker from its URL and creates Connections
// for the Locker's pool. A Connection is used by one thread at a time (the
// pool guarantees it). Every time value is computed by the database; the
// client's clock is never consulted for anything stored or compared.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sqlock/diagnosis.hpp"
#include "sqlock/duration.hpp"
#include "sqlock/lock_info.hpp"
#include "sqlock/pause.hpp"
#include "sqlock/run_history.hpp"

namespace sqlock::detail {

/// One row of the lock table, as read back from the database.
struct Row {
    std::int64_t id = 0;
    std::string lockstring;
    std::string created;  // UTC "YYYY-MM-DD HH:MM:SS.mmm"
    std::string expires;  // same
    std::string locked_by;
    double seconds_left = 0.0;  // expires - database now
};

/// Outcome of one acquisition attempt.
struct AcquireResult {
    std::optional<Row> acquired;  // our new row, when we got the lock
    std::optional<Row> holder;    // the current holder's row, when we did not (if known)
    /// `acquired` is a row of ours that an earlier statement wrote, found
    /// again (claim_own_holder), not one this attempt's statement wrote.
    bool claimed = false;
};

/// An attempt that found the name held by `locked_by` (an owner string
/// carries a token of its own, so the row is ours: an earlier statement of
/// ours took it and its answer never reached us, a statement applied after
/// its caller gave up, or a retry) becomes acquired, with that row, and
/// `claimed`. True when it did.
bool claim_own_holder(AcquireResult& r, const std::string& locked_by);

/// How long a claimed `row` (AcquireResult::claimed), ours, certainly lasts
/// after `sent`, when it came back from a statement sent at `sent` or
/// later: an earlier statement wrote it, perhaps one sent before `sent`, so
/// only the time the database said it had left, less the millisecond its
/// rounding up may add, and never more than `lease`. (A row the attempt's
/// own statement wrote lasts the whole lease from `sent`: the database set
/// its expiry from its own now, later than the sending. Its seconds_left
/// cannot say so: MariaDB reads it a statement later.)
duration certain_lease(const Row& row, duration lease);

enum class ReleaseOutcome {
    released,  // row deleted
    kept,      // row kept until created + min_hold (min_hold not yet over)
    lost,      // no row with this id and locked_by: not ours any more
};

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

    /// Checks, without changing anything, that this connection may do what
    /// locking needs (read and write the table); throws errc::configuration
    /// naming what is missing. For Locker::init(), so that `sqlock init`
    /// does not call a table ready that the next `run` cannot use.
    virtual void check_access() = 0;

    /// Inserts `lockstring`, or takes over its row if expired (new id). One
    /// atomic step. When held, fills `holder` if it can do so cheaply.
    virtual AcquireResult try_acquire(const std::string& lockstring, duration lease,
                                      const std::string& locked_by) = 0;

    /// Semaphore: the lowest free (or expired) slot of `name` among
    /// 1..capacity, each slot a row `slot_lockstring(name, n)`. The default
    /// tries them in order with try_acquire(); backends may do better.
    virtual AcquireResult try_acquire_slot(const std::string& name, int capacity, duration lease,
                                           const std::string& locked_by, int* slot_out);

    /// Deletes the row if (id, locked_by) match; with min_hold > 0 instead
    /// shortens its expiry to created + min_hold while that is still ahead.
    /// `lockstring` is the row's (the caller read it with the row): a backend
    /// that wakes waiters on another host tells those of this name.
    virtual ReleaseOutcome release(std::int64_t id, const std::string& lockstring,
                                   const std::string& locked_by, duration min_hold) = 0;

    /// Sets expires = now + lease if (id, locked_by) match and the row has not
    /// expired; returns the updated row, or nullopt when the lock is lost.
    virtual std::optional<Row> renew(std::int64_t id, const std::string& locked_by,
                                     duration lease) = 0;

    /// True if the row (id, locked_by) exists and has not expired.
    virtual bool is_held(std::int64_t id, const std::string& locked_by) = 0;

    /// Deletes at most `batch` expired rows in one short transaction.
    virtual std::size_t purge_expired_batch(std::size_t batch) = 0;

    /// The shortest pause a batched purge leaves between its batches
    /// (batch_pacing.hpp): longer than the longest sleep of this backend's
    /// busy wait, so that a waiter asleep during a batch wakes inside the
    /// pause, not in the next batch. None for servers, whose waiters queue
    /// on the row lock instead of sleeping.
    virtual duration min_batch_pause() const { return duration::zero(); }

    /// Rows whose lockstring starts with `prefix` (all if empty), by name.
    virtual std::vector<Row> list(const std::string& prefix, bool expired_only) = 0;

    /// Rows not expired, and rows expired (as purge_expired_batch counts
    /// them), in one aggregate query.
    virtual LockCounts lock_counts() = 0;

    /// The row named `lockstring`, if any.
    virtual std::optional<Row> find(const std::string& lockstring) = 0;

    /// Deletes the row with this id and exact locked_by; returns whether it
    /// did. `lockstring` as for release().
    virtual bool delete_exact(std::int64_t id, const std::string& lockstring,
                              const std::string& locked_by) = 0;

    // The run history (`<table>_runs`, see sqlock/run_history.hpp). Times
    // are the database's, as for the lock table. Reads derive the outcome of
    // a run still marked running whose lock row (id = fencing_id) is gone or
    // expired: lost, ended at the row's expiry while the row is there.
    // purge_expired_batch() records that end (outcome lost, ended = the
    // row's expiry) for the runs of the rows it deletes, in the same
    // transaction, when the history table exists.

    /// Whether the history table exists (Locker::init() creates it).
    virtual bool has_history() = 0;

    /// Milliseconds since the Unix epoch by the database's clock.
    virtual std::int64_t now_millis() = 0;

    /// Inserts a run of `name` held under lock row `fencing_id`: outcome
    /// running, started now. `window_start` ("" for none) is UTC text.
    /// Returns the run's id.
    virtual std::int64_t start_run(const std::string& name, std::int64_t fencing_id,
                                   const RunStart& info, const std::string& window_start) = 0;

    /// Records the end of run `run_id` if it is still marked running, in one
    /// atomic step: `end.outcome` if the lock row (fencing_id, locked_by) is
    /// still live at that moment, else lost. The lock row is locked for the
    /// step, so a take-over of an expiring lease comes after the record, and
    /// the new holder's once-per decision sees it. Returns what was
    /// recorded, or nullopt when the run was no longer marked running (the
    /// reaper recorded it lost).
    virtual std::optional<run_outcome> finish_run(std::int64_t run_id, std::int64_t fencing_id,
                                                  const std::string& locked_by,
                                                  const RunEnd& end) = 0;

    /// The runs of `name` recorded for the window starting at `window_start`
    /// (UTC text), oldest first.
    virtual std::vector<RunRecord> window_runs(const std::string& name,
                                               const std::string& window_start) = 0;

    /// Runs of `name` (all if empty) started within `since` of now (all if
    /// zero), newest first, at most `limit`.
    virtual std::vector<RunRecord> history(const std::string& name, duration since,
                                           std::size_t limit) = 0;

    /// The newest run of `name` that succeeded, if any (for `sqlock check`:
    /// one row however long the history, through the (name, started) index).
    virtual std::optional<RunRecord> last_success(const std::string& name) = 0;

    /// The number of runs per name and (derived) outcome, ordered by name,
    /// in one aggregate query.
    virtual std::vector<RunCount> run_counts() = 0;

    /// Deletes at most `batch` runs started more than `retention` ago (never
    /// one still running under a live lock) in one short transaction.
    virtual std::size_t prune_history_batch(duration retention, std::size_t batch) = 0;

    /// How many runs prune_history_batch() would delete now, all batches
    /// together (the same condition, counted: for `reap --dry-run`).
    virtual std::size_t count_prunable_runs(duration retention) = 0;

    // Pauses (`<table>_pauses`, see sqlock/pause.hpp). A pause is in force
    // while its paused_until is NULL or later than the database's now.

    /// Whether the pauses table exists (Locker::init() creates it).
    virtual bool has_pauses() = 0;

    /// Inserts or replaces the pause of `name` (created now, until now +
    /// `for_` when given) and returns it as stored.
    virtual PauseInfo pause(const std::string& name, const std::string& paused_by,
                            const std::string& reason, std::optional<duration> for_) = 0;

    /// Deletes the pause of `name`; whether it was in force.
    virtual bool resume(const std::string& name) = 0;

    /// The pause of `name` in force now, if any.
    virtual std::optional<PauseInfo> paused(const std::string& name) = 0;

    /// Every pause in force now, by name.
    virtual std::vector<PauseInfo> pauses() = 0;

    /// Deletes at most `batch` pauses that have ended (paused_until passed
    /// on the database's clock) in one short transaction; the condition is
    /// checked again on each row as it is deleted, so a pause renewed
    /// meanwhile by `pause` stays.
    virtual std::size_t purge_expired_pauses_batch(std::size_t batch) = 0;

    /// How many pauses have ended (what purge_expired_pauses_batch() would
    /// delete now, all batches together).
    virtual std::size_t count_expired_pauses() = 0;
};

/// Push notifications of releases, for backends that have them (PostgreSQL
/// LISTEN/NOTIFY). Used from a single thread, but for interrupt().
class ReleaseListener {
  public:
    virtual ~ReleaseListener() = default;
    /// Starts listening; after it returns, every later release is reported.
    virtual void listen() = 0;
    /// Waits up to `timeout`, or until interrupt(); returns the lockstrings
    /// released meanwhile (empty on timeout). Throws sqlock::error on
    /// connection failure.
    virtual std::vector<std::string> await(duration timeout) = 0;
    /// Says, for as long as this listener lives, that a waiter sleeps on
    /// `name` (`on`), or no longer does. A backend may push only the releases
    /// of names some listener waits for; once this returns, every release of
    /// `name` is reported. Throws sqlock::error on connection failure.
    virtual void waiting(const std::string& name, bool on) = 0;
    /// Makes the running await() return at once (or the next one, if none
    /// runs). The one call that may come from any thread.
    virtual void interrupt() noexcept = 0;
};

class Backend {
  public:
    virtual ~Backend() = default;
    virtual std::unique_ptr<Connection> connect() = 0;
    /// Null for backends that cannot push release events; waiters then poll
    /// with capped exponential backoff and jitter.
    virtual std::unique_ptr<ReleaseListener> listen() { return nullptr; }
    /// Makes the database itself exist, for Locker::init(). Only file-based
    /// backends have anything to do; a server's database is created by its
    /// administrator.
    virtual void create_database() {}
    virtual std::string name() const = 0;
    /// Adds what Locker::diagnose() reports about this backend's path to the
    /// database. The default suits a backend without a server or pushes.
    virtual void diagnose(Diagnosis& out) {
        out.facts.push_back({"wake-ups",
                             "polled (1 ms doubling to 100 ms, with jitter); "
                             "releases in this process wake at once"});
    }
};

/// "name#N": the row of slot N of semaphore `name`.
std::string slot_lockstring(const std::string& name, int slot);

/// Where a trailing "#N" (N one or more ASCII digits) starts in
/// `lockstring`, the position of its '#'; npos when there is none. What is
/// before it is the semaphore's name ("" for "#7").
std::size_t slot_suffix_at(const std::string& lockstring);

/// N when `lockstring` is slot_lockstring(name, N) for an N in 1..capacity,
/// else 0.
int slot_number(const std::string& lockstring, const std::string& name, int capacity);

}  // namespace sqlock::detail
