// ConnectionPool — a small bounded pool of backend connections.
//
// Connections are created lazily up to `max_size`, handed out most recently
// used first (a warm connection has its statements prepared and its socket
// open), and threads that find none free wait in FIFO order, so none starves.
// A checkout that cannot be served within the timeout throws errc::timeout
// naming the pool size and how many connections are busy; nothing blocks
// forever.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "contract/backend.hpp"

namespace sqlock::detail {

class ConnectionPool {
  public:
    using factory = std::function<std::unique_ptr<Connection>()>;

    ConnectionPool(factory make, std::size_t max_size, duration checkout_timeout);
    ~ConnectionPool();

    /// A checked-out connection; returns it to the pool when destroyed.
    class Handle {
      public:
        Handle(ConnectionPool* pool, std::unique_ptr<Connection> c)
            : pool_(pool), conn_(std::move(c)) {}
        Handle(Handle&&) = default;
        Handle& operator=(Handle&&) = delete;
        ~Handle();
        Connection* operator->() const { return conn_.get(); }
        Connection& operator*() const { return *conn_; }
        /// Drops the connection instead of returning it (after a broken link).
        void discard() noexcept;

      private:
        ConnectionPool* pool_;
        std::unique_ptr<Connection> conn_;
    };

    Handle checkout();

    /// How many threads are waiting in checkout() right now. For tests of the
    /// hand-out order: it is the only way to know a thread has queued.
    std::size_t waiting() const;

    /// Closes every idle connection (the next checkout opens one anew): a
    /// waiter that will not look at the database for a while holds no
    /// server connection meanwhile.
    void close_idle() noexcept;

    /// Runs `op` on a pooled connection. If the connection turns out broken
    /// (errc::connection), it is discarded and `op` is retried once on a fresh
    /// one when `retry_on_broken` is set.
    template <typename Op>
    auto with(Op&& op, bool retry_on_broken = true) -> decltype(op(std::declval<Connection&>()));

  private:
    /// Joins the line and waits, under `lock`, until first in it with a
    /// connection idle or one more allowed; throws errc::timeout.
    void wait_for_turn(std::unique_lock<std::mutex>& lock);
    void give_back(std::unique_ptr<Connection> c) noexcept;
    void forget_one() noexcept;

    factory make_;
    std::size_t max_size_;
    duration timeout_;
    mutable std::mutex mutex_;
    std::condition_variable cv_;
    std::vector<std::unique_ptr<Connection>> idle_;  // back = most recently used
    std::size_t open_ = 0;                           // idle + checked out
    std::uint64_t next_ticket_ = 0;
    std::deque<std::uint64_t> waiting_;  // tickets of waiting threads, in arrival order
};

}  // namespace sqlock::detail

#include "state/connection_pool_impl.hpp"
