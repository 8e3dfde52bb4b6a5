// Taking a lock (or a semaphore slot) for `run` and `acquire`, waiting with
// a progress line and staying responsive to signals while waiting.
#pragma once

#include <cxxopts.hpp>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/output.hpp"
#include "sqlock/locker.hpp"

namespace sqlock_cli {

/// What to acquire.
struct AcquireRequest {
    std::string name;  ///< with a set, its first name as given
    /// Two or more names: taken as one set, all or nothing (lock_all).
    std::vector<std::string> set{};
    int slots = 0;  ///< > 0: a slot of a counting semaphore
    /// `elect`: campaign for leadership of `name`, publishing this value.
    std::optional<std::string> leader_value{};
    sqlock::LockOptions options;  ///< lease, min_hold, heartbeat, ...; wait is ignored
    sqlock::duration wait{};      ///< 0: one attempt
    bool wait_forever = false;    ///< no deadline (`--wait forever`); ignores `wait`
    /// Called once when a wait begins (the first attempt found the lock
    /// taken), with the row in the way (null if it was just released).
    std::function<void(const sqlock::LockInfo* holder)> on_wait_start{};
    /// Called while waiting when an attempt meets a database unavailable for
    /// now (sqlock::error::unavailable()) after one that did not (the first
    /// of a spell, or a change between unreachable and read-only); the
    /// wait goes on through it.
    std::function<void(const sqlock::error& obstacle, sqlock::duration waited)> on_obstacle{};
};

/// `--shared`: `request` takes its names shared (several: one set, every
/// name shared). A usage error (64) with --slots.
void apply_shared_option(const cxxopts::ParseResult& options, AcquireRequest& request);

/// "exclusive" or "shared", as the command prints a mode.
const char* mode_name(sqlock::lock_mode mode);

/// Called while waiting (at least every half second); returns a signal
/// number that should end the wait, or 0.
using interruption_check = std::function<int()>;

/// Acquires, waiting up to `request.wait` in the library's own wait loop
/// (woken by releases). From the library's progress hook sqlock checks
/// `interrupted` and updates the progress line (stderr, at most every 2 s on
/// a terminal or 5 s otherwise; only on a terminal unless --verbose; never
/// with --quiet), using the holder the library passes: no second query.
///
/// Throws sqlock::error busy (no wait) or timeout (naming the holder and the
/// time waited), cli_error 128+N when interrupted by signal N, or whatever
/// the library throws for other failures.
sqlock::Lock acquire(sqlock::Locker& locker, const AcquireRequest& request, const Output& out,
                     const interruption_check& interrupted = {});

/// acquire() for leadership (`request.leader_value`): Election::campaign(),
/// waiting the same way.
sqlock::Leadership campaign(sqlock::Locker& locker, const AcquireRequest& request,
                            const Output& out, const interruption_check& interrupted = {});

/// acquire() for a set (`request.set`): every name or none, waiting the
/// same way. A timeout is the library's, naming every name in the way.
sqlock::LockSet acquire_set(sqlock::Locker& locker, const AcquireRequest& request,
                            const Output& out, const interruption_check& interrupted = {});

}  // namespace sqlock_cli
