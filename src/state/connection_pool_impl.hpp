// Template part of ConnectionPool.
#pragma once

#include "sqlock/error.hpp"

namespace sqlock::detail {

template <typename Op>
auto ConnectionPool::with(Op&& op, bool retry_on_broken)
    -> decltype(op(std::declval<Connection&>())) {
    for (int attempt = 0;; ++attempt) {
        Handle handle = checkout();
        try {
            return op(*handle);
        } catch (const error& e) {
            if (e.category() != errc::connection) throw;
            handle.discard();
            // The idle ones went to the same server, and are likely broken
            // too (it restarted, or failed over): the retry opens a fresh one.
            close_idle();
            if (!retry_on_broken || attempt > 0) throw;
        }
    }
}

}  // namespace sqlock::detail
