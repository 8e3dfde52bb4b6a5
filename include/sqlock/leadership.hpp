// Leader election over a lock: the holder of a name's lock leads, publishes
// a value (its address, its version), and everyone else can ask who leads
// or watch each change.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "sqlock/duration.hpp"
#include "sqlock/lock.hpp"
#include "sqlock/lock_info.hpp"

namespace sqlock {

class Locker;

namespace detail {
struct LockerState;
class LeaderWatchState;
}  // namespace detail

/// How long a leader's value may be: UTF-8 text without control
/// characters, at most this many bytes.
constexpr std::size_t max_leader_value_bytes = 256;

/// LeaderInfo
///
/// The current leader of a name, as Election::leader() and LeaderWatch read it.
struct LeaderInfo {
    /// The leader's lock row: `id` is its fencing id, `created` when it
    /// started to lead, `expires` its lease end, `holder` who it is.
    LockInfo lock{};
    /// What it proclaimed last ("" when it published nothing, as a holder
    /// that took the name with Locker::lock() rather than campaign()).
    std::string value{};
};

/// Leadership
///
/// Obtained from Election::campaign(): this process leads `name` for as long
/// as it holds the name's lock, which this object owns (lock()). Destroying
/// it resigns, as a Lock's destructor releases; a heartbeat and on_lost work
/// as for any lock (the options given to campaign()).
///
/// Thread safety: as a Lock's.
///
///     sqlock::Locker locker("postgresql://app@db/app");
///     sqlock::LockOptions o;
///     o.wait_forever = true;
///     o.heartbeat = true;
///     sqlock::Election election(locker, "scheduler");
///     sqlock::Leadership lead = election.campaign("10.0.0.7:8080", o);
///     serve(lead.id());          // the fencing id, as Lock::id()
///     lead.proclaim("10.0.0.7:8081");
///     lead.resign();             // a standby takes over at once
class Leadership {
  public:
    Leadership(Leadership&&) noexcept;
    Leadership& operator=(Leadership&&) noexcept;
    ~Leadership();

    const std::string& name() const noexcept { return name_; }
    /// The fencing id of this leadership (its lock row's id).
    std::int64_t id() const noexcept { return id_; }
    /// The value last proclaimed by this object.
    const std::string& value() const noexcept { return value_; }

    /// Publishes `value` in place of the current one, only while this
    /// process still leads: the write is guarded by the lock row's id and
    /// owner, so a leader that has lost its lock can never overwrite its
    /// successor's value. Throws errc::lost when it no longer leads,
    /// errc::invalid_argument for a bad value (max_leader_value_bytes), or
    /// a connection/backend error (then the value may or may not have been
    /// stored; proclaim again).
    void proclaim(const std::string& value);

    /// Stops leading now: the lock is released and a waiting candidate
    /// takes over at once. Throws as Lock::release(); a no-op once resigned.
    void resign();

    /// Asks the database whether this process still leads; false once
    /// resigned.
    bool held() const { return lock_.active() && lock_.held(); }
    /// True once a heartbeat or an operation found the leadership lost.
    bool lost() const noexcept { return lock_.lost(); }

    /// The lock that makes this process the leader.
    Lock& lock() noexcept { return lock_; }
    const Lock& lock() const noexcept { return lock_; }

  private:
    friend class Election;
    Leadership(Lock lock, std::string value);

    Lock lock_;
    std::string name_;
    std::int64_t id_;
    std::string value_;
};

/// What a LeaderWatch reports.
enum class leader_event {
    /// A new leader (a new fencing id), with its value.
    leader,
    /// The same leader proclaimed another value.
    value,
    /// Nobody leads: the leader resigned, released, or its lease ran out.
    /// Reported between two leaders even when the hand-over was faster than
    /// the watcher could see it.
    vacant,
    /// The watcher cannot reach the database; it tries again and then
    /// reports the state it finds (leader or vacant), even if unchanged.
    disconnected,
};

/// "leader", "value", "vacant", "disconnected".
const char* to_string(leader_event kind) noexcept;

/// One change seen by a LeaderWatch.
struct LeaderEvent {
    leader_event kind = leader_event::vacant;
    /// The leader, for `leader` and `value`.
    std::optional<LeaderInfo> leader{};
    /// Why, for `disconnected` (one line, no password).
    std::string error{};
};

/// How Election::observe() watches.
struct ObserveOptions {
    /// How often to read where nothing pushes changes (SQLite, MariaDB,
    /// PostgreSQL through a transaction pooler): 10 ms to 1 s.
    duration poll = std::chrono::milliseconds(250);
};

/// LeaderWatch
///
/// Obtained from Election::observe(): reports every change of a name's
/// leadership, in order, starting with the state it finds (leader or
/// vacant). On PostgreSQL changes are pushed (LISTEN/NOTIFY): the watcher
/// reads when told, at the leader's lease end (when a crashed leader stops
/// counting), and every 5 s to check its link (a frozen link raises no
/// error). Elsewhere it reads every ObserveOptions::poll. Values proclaimed
/// faster than it reads may be seen only as the last of them; a change of
/// leader is never missed. A read that fails (no answer within the
/// Locker's db_timeout) is reported once as `disconnected`; the watcher
/// tries again every second, so next() may take up to db_timeout longer
/// than its timeout.
///
/// Thread safety: next() from one thread at a time; interrupt() from any.
///
///     sqlock::LeaderWatch watch = sqlock::Election(locker, "scheduler").observe();
///     while (auto e = watch.next(std::chrono::seconds(10)))
///         std::cout << sqlock::to_string(e->kind) << '\n';
class LeaderWatch {
  public:
    LeaderWatch(LeaderWatch&&) noexcept;
    LeaderWatch& operator=(LeaderWatch&&) noexcept;
    ~LeaderWatch();

    const std::string& name() const;

    /// The next change, waiting up to `timeout` for it; nullopt when none
    /// came in that time or interrupt() was called. Throws sqlock::error
    /// for what trying again cannot mend (a configuration error).
    std::optional<LeaderEvent> next(duration timeout);

    /// Makes the running next() (or the next one) return nullopt at once.
    void interrupt() noexcept;

    /// Whether changes are pushed to this watcher now (PostgreSQL, not
    /// through a transaction pooler, its listening connection up), rather
    /// than polled. Known after the first next().
    bool pushed() const noexcept;

  private:
    friend class Election;
    explicit LeaderWatch(std::unique_ptr<detail::LeaderWatchState> state);

    std::unique_ptr<detail::LeaderWatchState> state_;
};

/// Election
///
/// The election of one name over a Locker: the holder of the name's lock
/// leads (a campaign is a lock with a value), and everyone can ask who leads
/// or watch each change. Values live in `<table>_leaders`, created by
/// init() like the lock table (errc::configuration names `sqlock init`
/// when it is missing). A light handle over the Locker's session, as etcd's
/// Election stands on a Session: it shares the Locker's connections and may
/// outlive it, as a Lock may.
///
/// Thread safety: as its Locker's: any number of threads may share one, and
/// a copy costs one shared pointer and the name.
///
///     sqlock::Election election(locker, "scheduler");
///     if (auto lead = election.leader()) connect_to(lead->value);
///     sqlock::Leadership mine = election.campaign("10.0.0.7:8080", options);
class Election {
  public:
    /// The election of `name` in `locker`'s lock table. Connects nothing
    /// yet. Throws errc::invalid_argument for a bad name or a moved-from
    /// Locker.
    Election(const Locker& locker, std::string name);

    const std::string& name() const noexcept { return name_; }

    /// Waits, as Locker::lock() does (`options.wait`, `wait_forever`, the
    /// fair line), until this process leads the name, then publishes
    /// `value` (UTF-8 without control characters, at most
    /// max_leader_value_bytes). The value is also stored in the lock row's
    /// metadata, so readers see it with the leader from the first moment.
    /// Throws as lock() does (busy, timeout), and errc::invalid_argument
    /// for a bad value or a shared `options.mode`.
    Leadership campaign(const std::string& value = {}, const LockOptions& options = {});

    /// The live leader, or nullopt when nobody leads (no live exclusive
    /// holder of the name).
    std::optional<LeaderInfo> leader();

    /// Watches the leadership (see LeaderWatch). Connects nothing yet: the
    /// first next() reads. Throws errc::invalid_argument for a bad poll
    /// interval.
    LeaderWatch observe(const ObserveOptions& options = {});

  private:
    std::shared_ptr<detail::LockerState> state_;
    std::string name_;
};

}  // namespace sqlock
