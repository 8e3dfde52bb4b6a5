// The state behind a Lock handle (shared by nested re-entrant handles).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "contract/backend.hpp"
#include "lock/heartbeat.hpp"
#include "sqlock/error.hpp"
#include "sqlock/options.hpp"
#include "state/locker_state.hpp"

namespace sqlock::detail {

/// Runs `release` for a destructor: a failure goes to the process's release
/// error handler (set_release_error_handler). Never throws.
void release_reporting_failure(const std::function<void()>& release) noexcept;

/// Stops a held lock's heartbeat (if any) at its end; in a forked child
/// (not `owner`), whose copy of its threads does not exist, forgets it.
void end_heartbeat(Heartbeat* heartbeat, pid_t owner) noexcept;

struct LockState;

/// Renews the row of `st` (and, for a shared hold, its marker) to `lease`
/// from now; nullopt when it is lost.
std::optional<Row> renew_row(Connection& c, const LockState& st, duration lease);

/// The claim a held row is renewed and released by: its own row, or a
/// shared holder's row of `name`.
Claim held_claim(const std::string& name, const std::string& lockstring, bool shared);

/// Tells the Locker's observer, if any, of a renewal of `st` sent at
/// `sent` that succeeded just now (sqlock/observer.hpp).
void tell_renewed(LockState& st, std::chrono::steady_clock::time_point sent) noexcept;

struct LockState {
    std::shared_ptr<LockerState> locker;
    std::string name;
    std::string lockstring;
    int slot = 0;
    bool shared = false;  // a shared hold: lockstring is its own row, name the marker's
    std::int64_t id = 0;
    std::string locked_by;
    std::string token;
    duration lease{};
    duration min_hold{};
    pid_t pid = 0;  // the process that acquired; a forked child must not release
    std::thread::id thread;
    lost_handler on_lost;
    expiring_handler on_expiring;
    renewed_late_handler on_renewed_late;

    // Lock::valid_until(): when the last successful acquisition or renewal
    // was sent, plus its lease (see heartbeat.hpp).
    Validity validity;

    mutable std::mutex mutex;  // guards created/expires/depth against the heartbeat
    std::string created;
    std::string expires;
    int depth = 1;  // re-entrant nesting, guarded by locker->holds_mutex

    // For the Locker's observer (sqlock/observer.hpp): when the acquisition
    // was sent, and the renewals that failed in a row since the last one
    // that succeeded.
    std::chrono::steady_clock::time_point acquired_at{};
    std::atomic<int> failed_renewals{0};

    std::atomic<bool> released{false};
    std::atomic<bool> lost{false};
    std::unique_ptr<Heartbeat> heartbeat;

    /// Marks the lock lost and calls on_lost once. Never throws.
    void mark_lost() noexcept;
    /// Stops the heartbeat, removes the in-process hold record. Never throws.
    void detach() noexcept;
    /// The actual release (row delete or min-hold keep). Throws on failure.
    void release_row();

    ~LockState();
};

}  // namespace sqlock::detail
