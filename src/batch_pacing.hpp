// Pacing of the long, batched deletes (purge_expired, purge_expired_pauses,
// prune_history): between two batches, leave the database to everybody else
// for as long as the batch held it, so a large purge never starves
// acquirers (they get at least half of the time), and never for less than
// the backend's Connection::min_batch_pause().
#pragma once

#include <algorithm>
#include <chrono>
#include <thread>

#include "sqlock/duration.hpp"

namespace sqlock::detail {

/// Sleeps after a batch that began at `started`.
inline void pause_after_batch(std::chrono::steady_clock::time_point started, duration floor) {
    std::this_thread::sleep_for(std::max<std::chrono::steady_clock::duration>(
        std::chrono::steady_clock::now() - started, floor));
}

}  // namespace sqlock::detail
