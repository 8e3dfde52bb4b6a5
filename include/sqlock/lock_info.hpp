// LockInfo — a lock row as the database holds it, for listing and messages.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace sqlock {

/// Who holds a lock, parsed leniently from the row's `locked_by` JSON.
/// Fields the row does not carry (for example rows written by DBIx::Locker or
/// by hand) are left empty or zero; a malformed `locked_by` never throws.
struct Holder {
    std::string host{};
    long pid = 0;
    std::string user{};
    std::string program{};
    std::string guid{};  ///< the holder's owner token
    /// The minimum hold and the lease the holder asked for, in milliseconds,
    /// or 0: sqlock records them when a minimum hold is set, so that a row
    /// kept after its job finished can be told from a running job's.
    std::int64_t min_hold_ms = 0;
    std::int64_t lease_ms = 0;
};

/// A row of the lock table.
struct LockInfo {
    std::int64_t id = 0;        ///< fencing token: strictly increasing, never reused
    std::string name{};         ///< the `lockstring` column (slots: "name#N")
    std::string created{};      ///< UTC, "YYYY-MM-DD HH:MM:SS.mmm", from the DB clock
    std::string expires{};      ///< UTC, same format, from the DB clock
    std::string locked_by{};    ///< the raw column (JSON for sqlock holders)
    Holder holder{};            ///< `locked_by`, parsed
    double seconds_left = 0.0;  ///< expires minus the database's now; <= 0 once expired

    bool expired() const noexcept { return seconds_left <= 0.0; }
    /// The row is a name's shared marker: the name is held shared, by the
    /// holders Locker::shared_holders() lists, each a row of its own.
    bool shared_marker() const;
    /// `created` and `expires` as time points (UTC, the database's clock);
    /// the epoch for a value that is not a time (rows of other programs).
    std::chrono::system_clock::time_point created_time() const noexcept;
    std::chrono::system_clock::time_point expires_time() const noexcept;
};

/// "host:pid (user, program)" — as much of it as is known, or the raw column;
/// ", process gone" is added inside the parentheses when holder_process_gone().
/// Safe to print as it is: what came from the row is escaped (\xNN).
std::string describe_holder(const LockInfo& info);

/// True if the holder ran on this host (same host name) and its process no
/// longer exists. A hint for messages, never a reason to take a lock: a pid
/// may be reused, and another PID namespace on the same host is invisible.
bool holder_process_gone(const LockInfo& info);

/// True if the row is only kept by its holder's minimum hold: the job ended
/// and released it before `created + min_hold`, which is when it expires.
/// Known only for rows whose holder recorded a minimum hold (sqlock does).
bool kept_by_min_hold(const LockInfo& info);

/// How many rows the lock table has: `held` (not expired) and `expired`
/// (waiting for the reaper; they block nobody). Locker::lock_counts().
struct LockCounts {
    std::int64_t held = 0;
    std::int64_t expired = 0;
};

/// NameActivity
///
/// One name's live locks and waiters, as the database saw them at one look
/// (Locker::lock_activity(), `sqlock metrics`). A semaphore's slots
/// ("name#N") and a shared hold's holders count under the name. Ages are
/// by the database's clock.
struct NameActivity {
    std::string name{};
    /// Live holder rows: 1 for a plain lock or a leader, the slots in use of
    /// a semaphore, the holders of a shared hold; 0 when only waiters are
    /// there.
    std::int64_t holders = 0;
    /// Seconds since the oldest live holder took its row (0 without one).
    double holder_age_seconds = 0.0;
    /// Seconds until the first live holder's lease ends (0 without one).
    double holder_seconds_left = 0.0;
    /// Live waiters in line for the name.
    std::int64_t waiters = 0;
    /// The name is an election (it has a row in the leaders table).
    bool election = false;
    /// With `election`: the live leader's fencing id (its lock row's id), 0
    /// when nobody leads.
    std::int64_t leader_id = 0;
};

/// What Locker::lock_activity() read: every name with a live holder, a
/// waiter or an election, by name (bytewise), and the table's counts.
struct LockActivity {
    std::vector<NameActivity> names{};
    LockCounts counts{};
};

}  // namespace sqlock
