// What a Locker shares with the Locks it hands out (they may outlive it).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "contract/backend.hpp"
#include "loading/url.hpp"
#include "sqlock/options.hpp"
#include "state/connection_pool.hpp"
#include "state/release_hub.hpp"

namespace sqlock::detail {

struct HeldClaim;

struct LockerState {
    DatabaseUrl url;
    std::string table;
    LockerOptions options;
    std::unique_ptr<Backend> backend;
    std::unique_ptr<ConnectionPool> pool;
    std::unique_ptr<ReleaseHub> hub;
    std::atomic<bool> needs_init{false};
    std::mutex init_mutex;
    pid_t creator_pid;

    // How fast each name's line of waiters was last seen to move, in
    // places a second (wait_queue.hpp): a waiter that joins the line again
    // starts from it rather than from a guess.
    std::mutex line_speeds_mutex;
    std::map<std::string, double> line_speeds;

    // Locks this Locker holds, by lockstring: for fail-fast and re-entrant
    // acquisition by the thread that already holds one (sets are not kept).
    std::mutex holds_mutex;
    std::map<std::string, std::weak_ptr<HeldClaim>> holds;

    LockerState() = default;
    ~LockerState();
};

/// Creates the tables when the Locker initialises them itself (auto_init)
/// and has not yet; once per Locker, thread-safe.
void ensure_initialized(LockerState& s);

}  // namespace sqlock::detail
