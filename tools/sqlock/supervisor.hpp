// Watching the command while the lock is held: forward signals, notice a
// lost lock, collect the command when it ends.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>

#include "child_process.hpp"
#include "signals.hpp"

namespace sqlock_cli {

struct SupervisePolicy {
    /// On a lost lock: SIGTERM the command, then SIGKILL after `kill_grace`.
    bool terminate_on_lost = true;
    std::chrono::milliseconds kill_grace{10000};
};

struct SuperviseResult {
    int status = 0;     ///< the command's wait status
    bool lost = false;  ///< the lock was reported lost while the command ran
};

/// Runs until the command has ended and been collected. Forwards each
/// forwardable signal sent to sqlock alone (not the terminal's, which the
/// command got itself; see signals.hpp). When `lost` turns true (set by the
/// heartbeat's on_lost), calls `on_lost` once and applies `policy`.
SuperviseResult supervise(ChildProcess& child, SignalRelay& signals, const std::atomic<bool>& lost,
                          const SupervisePolicy& policy, const std::function<void()>& on_lost);

}  // namespace sqlock_cli
