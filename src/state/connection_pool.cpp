#include "state/connection_pool.hpp"

#include <algorithm>
#include <chrono>

#include "sqlock/error.hpp"

namespace sqlock::detail {

ConnectionPool::ConnectionPool(factory make, std::size_t max_size, duration checkout_timeout)
    : make_(std::move(make)), max_size_(max_size ? max_size : 1), timeout_(checkout_timeout) {}

ConnectionPool::~ConnectionPool() = default;

ConnectionPool::Handle::~Handle() {
    if (conn_) pool_->give_back(std::move(conn_));
}

void ConnectionPool::Handle::discard() noexcept {
    if (!conn_) return;
    conn_.reset();
    pool_->forget_one();
}

ConnectionPool::Handle ConnectionPool::checkout() {
    std::unique_lock<std::mutex> lock(mutex_);
    // Nobody in line and a connection idle: take it without queueing (every
    // operation checks out a connection, most from a pool nobody waits for).
    if (!waiting_.empty() || idle_.empty()) wait_for_turn(lock);
    if (!idle_.empty()) {
        std::unique_ptr<Connection> conn = std::move(idle_.back());
        idle_.pop_back();
        return Handle(this, std::move(conn));
    }
    std::unique_ptr<Connection> conn;
    ++open_;
    lock.unlock();
    try {
        conn = make_();
    } catch (...) {
        forget_one();
        throw;
    }
    return Handle(this, std::move(conn));
}

void ConnectionPool::wait_for_turn(std::unique_lock<std::mutex>& lock) {
    const std::uint64_t ticket = next_ticket_++;
    waiting_.push_back(ticket);
    const auto deadline = std::chrono::steady_clock::now() + timeout_;
    // Served in arrival order: a thread proceeds only when it is first in
    // line and a connection is idle or may still be opened.
    auto ready = [&] {
        return waiting_.front() == ticket && (!idle_.empty() || open_ < max_size_);
    };
    bool got_turn = cv_.wait_until(lock, deadline, ready);
    waiting_.erase(std::find(waiting_.begin(), waiting_.end(), ticket));
    cv_.notify_all();  // the next in line may be able to go now
    if (!got_turn) {
        std::size_t busy = open_ - idle_.size();
        throw error(errc::timeout, "no database connection free after " +
                                       format_duration(timeout_) + ": pool size " +
                                       std::to_string(max_size_) + ", " + std::to_string(busy) +
                                       " busy");
    }
}

std::size_t ConnectionPool::waiting() const {
    std::lock_guard<std::mutex> guard(mutex_);
    return waiting_.size();
}

void ConnectionPool::close_idle() noexcept {
    std::vector<std::unique_ptr<Connection>> closing;
    {
        std::lock_guard<std::mutex> guard(mutex_);
        closing.swap(idle_);
        open_ -= closing.size();
    }
    cv_.notify_all();  // room for one more in the line's turn
    // Closed outside the lock: closing a server connection is a round trip.
}

void ConnectionPool::give_back(std::unique_ptr<Connection> c) noexcept {
    bool anyone_waits;
    {
        std::lock_guard<std::mutex> guard(mutex_);
        idle_.push_back(std::move(c));
        // A thread that will wait joins the line under this mutex first.
        anyone_waits = !waiting_.empty();
    }
    if (anyone_waits) cv_.notify_all();
}

void ConnectionPool::forget_one() noexcept {
    {
        std::lock_guard<std::mutex> guard(mutex_);
        --open_;
    }
    cv_.notify_all();
}

}  // namespace sqlock::detail
