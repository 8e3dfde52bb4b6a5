#include "election/leader_watch.hpp"

#include <algorithm>
#include <utility>

#include "base/owner.hpp"
#include "base/validate.hpp"
#include "election/leader_read.hpp"

namespace sqlock {

namespace detail {

LeaderWatchState::LeaderWatchState(std::shared_ptr<LockerState> locker, std::string name_,
                                   duration poll)
    : name(std::move(name_)), locker_(std::move(locker)), poll_(poll) {}

LeaderWatchState::~LeaderWatchState() = default;

void LeaderWatchState::interrupt() noexcept {
    std::lock_guard<std::mutex> guard(mutex_);
    interrupted_ = true;
    if (listener_) listener_->interrupt();
    cv_.notify_all();
}

bool LeaderWatchState::pushed() noexcept {
    std::lock_guard<std::mutex> guard(mutex_);
    return listener_ != nullptr;
}

void LeaderWatchState::start_listening() {
    const auto now = clock::now();
    if (listener_ || now < listen_at_) return;
    std::unique_ptr<ReleaseListener> made;
    try {
        made = locker_->backend->listen();
        if (!made) {
            // No pushes here (SQLite, MariaDB, a transaction pooler): ask
            // again now and then, as a pooler may be told apart later.
            listen_at_ = now + std::chrono::seconds(30);
            return;
        }
        // Its own inbox (nobody writes to it), the table's channel (where
        // proclaims are told) and the name's releases.
        made->listen("sqlock_o_" + random_token());
        made->waiting(name, true);
    } catch (const error&) {
        listen_at_ = now + std::chrono::seconds(5);  // polled meanwhile
        return;
    }
    std::lock_guard<std::mutex> guard(mutex_);
    listener_ = std::move(made);
    if (interrupted_) listener_->interrupt();
    // What changed before the listener heard anything is read now.
    read_at_ = {};
}

void LeaderWatchState::report(const std::optional<LeaderInfo>& now) {
    if (!now) {
        if (known_ != Known::vacant) pending_.push_back({leader_event::vacant, std::nullopt, {}});
        known_ = Known::vacant;
        return;
    }
    if (known_ == Known::leader && id_ == now->lock.id) {
        if (value_ != now->value) pending_.push_back({leader_event::value, now, {}});
    } else {
        // A new fencing id means the old leader's row ended first: that
        // vacancy is told even when it was too short to be read.
        if (known_ == Known::leader) pending_.push_back({leader_event::vacant, std::nullopt, {}});
        pending_.push_back({leader_event::leader, now, {}});
    }
    known_ = Known::leader;
    id_ = now->lock.id;
    value_ = now->value;
}

void LeaderWatchState::read() {
    const auto sent = clock::now();
    std::optional<LeaderInfo> found;
    try {
        // No retry on a new connection: the watcher tries again itself,
        // and says first that it could not read.
        found = locker_->pool->with([&](Connection& c) { return read_leader(c, name); },
                                    /*retry_on_broken=*/false);
    } catch (const error& e) {
        const errc category = e.category();
        if (category != errc::connection && category != errc::timeout && category != errc::busy)
            throw;
        if (!disconnected_)
            pending_.push_back({leader_event::disconnected, std::nullopt, e.what()});
        disconnected_ = true;
        // The state found once the database answers again is told whatever
        // it is: what happened meanwhile is unknown.
        known_ = Known::nothing;
        read_at_ = clock::now() + unreachable_retry;
        return;
    }
    disconnected_ = false;
    report(found);
    // The leader's lease end is when a crashed leader stops counting:
    // nothing announces it, so it is read then.
    duration next = listener_ ? duration(pushed_reread) : poll_;
    if (found) {
        const auto lease_end = std::chrono::duration_cast<duration>(
            std::chrono::duration<double>(std::max(found->lock.seconds_left, 0.0)));
        next = std::min(next, lease_end + std::chrono::milliseconds(20));
    }
    read_at_ = sent + next;
}

bool LeaderWatchState::sleep_until(clock::time_point until) {
    if (listener_) {
        try {
            const auto left = std::max(until - clock::now(), clock::duration::zero());
            if (!listener_->await(std::chrono::duration_cast<duration>(left)).empty())
                read_at_ = {};  // a release of the name or a proclaim in the table
        } catch (const error&) {
            // Pushes may have been missed: poll from now, listen again later.
            std::lock_guard<std::mutex> guard(mutex_);
            listener_.reset();
            listen_at_ = clock::now() + std::chrono::seconds(1);
            read_at_ = {};
        }
        std::lock_guard<std::mutex> guard(mutex_);
        return std::exchange(interrupted_, false);
    }
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait_until(lock, until, [&] { return interrupted_; });
    return std::exchange(interrupted_, false);
}

std::optional<LeaderEvent> LeaderWatchState::next(duration timeout) {
    const auto deadline = clock::now() + timeout;
    for (;;) {
        if (!pending_.empty()) {
            LeaderEvent e = std::move(pending_.front());
            pending_.pop_front();
            return e;
        }
        {
            std::lock_guard<std::mutex> guard(mutex_);
            if (std::exchange(interrupted_, false)) return std::nullopt;
        }
        start_listening();
        if (clock::now() >= read_at_) {
            read();
            continue;
        }
        const auto now = clock::now();
        if (now >= deadline) return std::nullopt;
        if (sleep_until(std::min({read_at_, deadline, listen_at_ > now ? listen_at_ : read_at_})))
            return std::nullopt;
    }
}

}  // namespace detail

LeaderWatch::LeaderWatch(std::unique_ptr<detail::LeaderWatchState> state)
    : state_(std::move(state)) {}
LeaderWatch::LeaderWatch(LeaderWatch&&) noexcept = default;
LeaderWatch& LeaderWatch::operator=(LeaderWatch&&) noexcept = default;
LeaderWatch::~LeaderWatch() = default;

const std::string& LeaderWatch::name() const {
    return state_->name;
}

std::optional<LeaderEvent> LeaderWatch::next(duration timeout) {
    if (!state_) throw error(errc::invalid_argument, "this LeaderWatch was moved from");
    return state_->next(timeout);
}

void LeaderWatch::interrupt() noexcept {
    if (state_) state_->interrupt();
}

bool LeaderWatch::pushed() const noexcept {
    return state_ && state_->pushed();
}

LeaderWatch Election::observe(const ObserveOptions& options) {
    if (options.poll < std::chrono::milliseconds(10) || options.poll > std::chrono::seconds(1))
        throw error(errc::invalid_argument,
                    "a leader watch polls every 10ms to 1s, got " + format_duration(options.poll));
    detail::ensure_initialized(*state_);
    return LeaderWatch(std::make_unique<detail::LeaderWatchState>(state_, name_, options.poll));
}

}  // namespace sqlock
