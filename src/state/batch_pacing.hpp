// Pacing of the long, batched deletes (purge_expired, purge_expired_pauses,
// prune_history): between two batches, leave the database to everybody else
// for as long as the batch held it, so a large purge never starves
// acquirers (they get at least half of the time), and never for less than
// the backend's Connection::min_batch_pause().
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <thread>

#include "contract/backend.hpp"
#include "sqlock/duration.hpp"

namespace sqlock::detail {

/// Runs `one_batch(Connection&)` through `with` (the caller's way to a
/// pooled connection: `with(op)` returns op's result) until a batch deletes
/// fewer than `batch_size` rows, pausing between batches; the total.
template <typename With, typename Batch>
std::size_t in_paced_batches(std::size_t batch_size, With&& with, Batch&& one_batch) {
    std::size_t total = 0;
    for (;;) {
        const auto started = std::chrono::steady_clock::now();
        duration floor{};
        const std::size_t n = with([&](Connection& c) {
            floor = c.min_batch_pause();
            return one_batch(c);
        });
        total += n;
        if (n < batch_size) return total;
        std::this_thread::sleep_for(std::max<std::chrono::steady_clock::duration>(
            std::chrono::steady_clock::now() - started, floor));
    }
}

}  // namespace sqlock::detail
