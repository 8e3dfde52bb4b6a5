#include "held/heartbeat.hpp"

#include <algorithm>
#include <utility>

namespace sqlock::detail {

Heartbeat::Settings Heartbeat::settings_for(duration lease, duration db_timeout,
                                            duration warn_before) {
    Settings s;
    s.lease = lease;
    s.interval = std::max(lease / 6, duration(1));
    s.retry = std::max(s.interval / 3, duration(1));
    s.attempt_timeout = std::min(s.interval, db_timeout);
    s.warn_before = warn_before;
    return s;
}

Heartbeat::Heartbeat(Settings settings, Validity& validity,
                     std::function<bool(clock::time_point)> renew, std::function<void()> lost,
                     std::function<void(clock::time_point)> expiring,
                     std::function<void(int, duration)> renewed_late)
    : settings_(settings),
      validity_(validity),
      renew_(std::move(renew)),
      lost_(std::move(lost)),
      expiring_(std::move(expiring)),
      renewed_late_(std::move(renewed_late)) {
    renewer_ = std::thread([this] { run_renewer(); });
    timer_ = std::thread([this] { run_timer(); });
}

Heartbeat::~Heartbeat() {
    stop();
}

void Heartbeat::stop() noexcept {
    {
        std::lock_guard<std::mutex> guard(mutex_);
        stopping_ = true;
    }
    cv_.notify_all();
    for (std::thread* t : {&timer_, &renewer_}) {
        if (!t->joinable()) continue;
        // A lost or expiring handler that releases its lock stops us from
        // our own thread: that thread ends by itself.
        if (t->get_id() == std::this_thread::get_id())
            t->detach();
        else
            t->join();
    }
}

std::optional<error> Heartbeat::last_failure() const {
    std::lock_guard<std::mutex> guard(mutex_);
    return last_failure_;
}

void Heartbeat::abandon() noexcept {
    if (timer_.joinable()) timer_.detach();
    if (renewer_.joinable()) renewer_.detach();
}

void Heartbeat::run_renewer() {
    std::unique_lock<std::mutex> lock(mutex_);
    int failures = 0;  // in a row, since the last renewal that succeeded
    for (;;) {
        cv_.wait(lock, [&] { return stopping_ || requested_; });
        if (stopping_) return;
        requested_ = false;
        busy_ = true;
        lock.unlock();
        const auto sent = clock::now();
        outcome result = outcome::failed;
        std::optional<error> failure;
        try {
            result = renew_(sent + settings_.attempt_timeout) ? outcome::renewed : outcome::gone;
        } catch (const error& e) {
            // Transient (no answer, connection lost, database busy or
            // read-only): the row may well still be ours; the timer decides
            // what that means.
            failure = e;
        } catch (const std::exception& e) {
            failure = error(errc::backend, e.what());
        } catch (...) {
            failure = error(errc::backend, "unknown failure while renewing");
        }
        // Even an answer that came after the deadline counts: the database
        // executed the renewal after `sent`.
        if (result == outcome::renewed) {
            const auto left = std::max(
                duration::zero(), std::chrono::duration_cast<duration>(validity_.until() - sent));
            validity_.granted(sent, settings_.lease);
            if (failures > 0 && renewed_late_) renewed_late_(failures, left);
            failures = 0;
        } else if (result == outcome::failed) {
            ++failures;
        }
        lock.lock();
        if (result == outcome::failed)
            last_failure_ = std::move(failure);
        else
            last_failure_.reset();
        busy_ = false;
        result_ = result;
        result_sent_ = sent;
        cv_.notify_all();
    }
}

void Heartbeat::run_timer() {
    std::unique_lock<std::mutex> lock(mutex_);
    // The acquisition was sent a lease before valid_until.
    auto next_attempt = validity_.until() - settings_.lease + settings_.interval;
    auto warned_for = clock::time_point::min();
    for (;;) {
        if (stopping_) return;
        const outcome result = std::exchange(result_, outcome::none);
        const auto now = clock::now();
        if (result == outcome::renewed)
            next_attempt = result_sent_ + settings_.interval;
        else if (result == outcome::failed)
            next_attempt = now + settings_.retry;
        const auto valid_until = validity_.until();
        if (result == outcome::gone || now >= valid_until) {
            lock.unlock();
            if (lost_) lost_();
            return;
        }
        const auto warn_at = valid_until - settings_.warn_before;
        const bool warn = expiring_ && settings_.warn_before > duration::zero();
        if (warn && warned_for != valid_until && now >= warn_at) {
            warned_for = valid_until;
            lock.unlock();
            expiring_(valid_until);
            lock.lock();
            continue;
        }
        if (!busy_ && !requested_ && now >= next_attempt) {
            requested_ = true;
            cv_.notify_all();
        }
        auto wake = valid_until;
        if (warn && warned_for != valid_until) wake = std::min(wake, warn_at);
        if (!busy_ && !requested_) wake = std::min(wake, next_attempt);
        cv_.wait_until(lock, wake);
    }
}

std::unique_ptr<Heartbeat> heartbeat_for(const LockOptions& o, duration db_timeout,
                                         Validity& validity, std::string name, std::int64_t id,
                                         std::function<bool(Heartbeat::clock::time_point)> renew,
                                         std::function<void()> lost) {
    if (!o.heartbeat) return nullptr;
    const duration warn = o.warn_before > duration::zero() ? o.warn_before : o.expires / 4;
    std::function<void(Heartbeat::clock::time_point)> expiring;
    if (o.on_expiring)
        expiring = [name, id, handler = o.on_expiring](Heartbeat::clock::time_point until) {
            try {
                handler(name, id, until);
            } catch (...) {
                // A throwing handler must not end the heartbeat.
            }
        };
    std::function<void(int, duration)> renewed_late;
    if (o.on_renewed_late)
        renewed_late = [name, id, handler = o.on_renewed_late](int failures, duration left) {
            try {
                handler(name, id, failures, left);
            } catch (...) {
                // A throwing handler must not end the heartbeat.
            }
        };
    return std::make_unique<Heartbeat>(Heartbeat::settings_for(o.expires, db_timeout, warn),
                                       validity, std::move(renew), std::move(lost),
                                       std::move(expiring), std::move(renewed_late));
}

}  // namespace sqlock::detail
