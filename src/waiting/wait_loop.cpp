#include "waiting/wait_loop.hpp"

#include <algorithm>
#include <chrono>
#include <random>

#include "state/release_hub.hpp"
#include "waiting/contention_text.hpp"
#include "waiting/obstacle.hpp"
#include "waiting/wait_queue.hpp"

namespace sqlock::detail {

std::optional<LockInfo> Refusal::first_holder() const {
    if (holders.empty()) return std::nullopt;
    return to_info(holders.front());
}

namespace {

using clock = std::chrono::steady_clock;
using micros = std::chrono::microseconds;

// Who listens for pushes: the first three in line, so that the one woken to
// the front already listens, and the one behind it too, in case it looked
// last when it was third.
constexpr std::int64_t listen_within = 2;

// How far away a waiter's next look must be for it to give up its pooled
// connections meanwhile. A new PostgreSQL session costs about a hundred
// times a look (measured on the test machines: 13 ms a connection with
// pgbench -C, about 0.1 ms a statement), and 256 waiters reconnecting for
// every look kept two cores busy; so a waiter that looks every few seconds
// keeps its connection, and one that looks every half minute or less often
// gives it up.
constexpr auto idle_connection_after = std::chrono::seconds(30);

// With pushes, a waiter looks once shortly after it joined: the one ahead
// may have been leaving the line as it joined, in a statement whose
// snapshot predates the join, which then woke nobody. A look after that
// statement has surely ended finds the place first.
constexpr auto join_recheck = std::chrono::milliseconds(200);

// Safety net against a missed push: the first in line looks this often.
constexpr auto safety_net = std::chrono::seconds(5);

class WaitLoop {
  public:
    WaitLoop(LockerState& s, Claimant& claimant, const LockOptions& o)
        : s_(s),
          claimant_(claimant),
          o_(o),
          waits_(o.wait_forever || o.wait > duration::zero()),
          start_(clock::now()),
          deadline_(o.wait_forever ? clock::time_point::max() : start_ + o.wait),
          queue_lease_(queue_lease_for(o.queue_lease, o.expires)),
          schedule_(s.backend->poll_schedule()),
          backoff_(schedule_.first),
          mark_(s.hub->mark()) {}

    void run() {
        for (;;) {
            const std::uint64_t slept_from = mark_;
            mark_ = s_.hub->mark();
            if (obstacles_.blocked() && clock::now() < obstacles_.retry_at()) {
                pause_for_obstacle();
                continue;
            }
            try {
                look_at_place(slept_from);
                if (tries() && try_claim()) return;
            } catch (const error& e) {
                if (!waits_ || !claimant_.waits_through_obstacles()) throw;
                if (e.category() == errc::busy) {
                    // A race the database broke off (a serialization
                    // failure, a deadlock): refused, with nobody known in
                    // the way.
                    refusal_ = Refusal{};
                } else if (e.unavailable()) {
                    claimant_.attempt_in_doubt();
                    obstacles_.met(e, clock::now());
                    tell_obstacle(e);
                    pause_for_obstacle();
                    continue;
                } else {
                    throw;
                }
            }
            obstacles_.cleared(clock::now());
            fail_if_over();
            join_line();
            if (!hub_started_ && claimant_.wakes_by_push() &&
                (!place_ || place_->ahead() <= listen_within)) {
                start_listening();
                if (!tries()) {
                    next_look_ = clock::now();
                    continue;
                }
            }
            if (!tries()) {
                sleep_behind();
                continue;
            }
            if (watch_before_sleeping()) continue;
            sleep_first_in_line();
        }
    }

  private:
    // Who tries the names itself: the first in line, and without pushes the
    // second too. The first leaving the line (it got the name) is told to
    // the second only by a push; without one, the second would learn it a
    // look later, and the name would idle meanwhile. Its attempts find out
    // instead: they succeed once the first is gone and the name is free.
    bool tries() const { return !place_ || place_->ahead() <= (pushed() ? 0 : 1); }

    // Whether a release of the names is pushed to this waiter.
    bool pushed() const { return claimant_.wakes_by_push() && s_.hub->pushes(); }

    // Behind those in front, only the place is looked at (and renewed):
    // when due, or when woken (the one ahead left), not at every progress
    // report.
    void look_at_place(std::uint64_t slept_from) {
        if (!place_) return;
        const auto now = clock::now();
        const bool behind = !tries();
        const bool woken =
            std::any_of(claimant_.names().begin(), claimant_.names().end(),
                        [&](const std::string& name) { return s_.hub->woken(name, slept_from); });
        const bool due = now >= place_->renew_due() || (behind && (now >= next_look_ || woken));
        if (!due) return;
        paced_look_ = clock::time_point::min();
        recheck_ = clock::time_point::max();
        if (!place_->poll()) place_.reset();  // lapsed: join again
    }

    // One attempt; true when taken (and handed out).
    bool try_claim() {
        refusal_ = Refusal{};
        const std::int64_t before = place_ ? place_->ticket() : INT64_MAX;
        if (claimant_.attempt(before, refusal_)) {
            // At once: the one behind may take the next free slot, or
            // starts to watch the name. Only a separate leave() is a round
            // trip after the acquisition that the attempt vouched for.
            const bool left_apart = place_ && !refusal_.left_line;
            if (place_ && refusal_.left_line)
                place_->forget();
            else if (place_)
                place_->leave();
            if (!left_apart || claimant_.vouched_after_leaving()) return true;
            // Lapsed while it left the line: not ours after all. On to the
            // next attempt, at the back.
            place_.reset();
            refusal_ = Refusal{};
            refusal_.lapsed = true;
            refusal_.queue_exists = true;
        }
        // Taken and the line left by the statement, but the row had
        // expired before it could be vouched for: the place is gone, and
        // the one behind was told it is first.
        if (place_ && refusal_.left_line) {
            place_->forget();
            place_.reset();
        }
        // Second in line, and nobody ahead any more: first now. Its polling
        // starts afresh, so that the hand-off after a short hold is not a
        // whole capped interval late.
        if (place_ && place_->ahead() > 0 && !refusal_.queued) {
            place_->moved_to_front();
            backoff_ = schedule_.first;
        }
        return false;
    }

    // Between attempts that met an unavailable database: the deadline and
    // the progress hook as after any attempt (the hook is told of nobody in
    // the way), then a sleep until the next attempt is due.
    void pause_for_obstacle() {
        const auto now = clock::now();
        const auto waited = std::chrono::duration_cast<duration>(now - start_);
        if (now >= deadline_) throw obstacles_.give_up(claimant_.subject(), waited, "gave up", now);
        if (o_.on_waiting && !o_.on_waiting(nullptr, waited))
            throw obstacles_.give_up(claimant_.subject(), waited, "stopped", now);
        const auto until = std::min(deadline_, obstacles_.retry_at());
        s_.hub->wait_after(claimant_.names(), mark_, progress_bound(until, now));
    }

    void tell_obstacle(const error& e) {
        if (!o_.on_obstacle) return;
        const auto now = clock::now();
        if (!o_.on_obstacle(e, std::chrono::duration_cast<duration>(now - start_)))
            throw obstacles_.give_up(claimant_.subject(),
                                     std::chrono::duration_cast<duration>(now - start_), "stopped",
                                     now);
    }

    // ", 4.2s of it with the database unavailable", for a wait that also
    // met obstacles.
    std::string unavailable_text(clock::time_point now) const {
        const duration d = obstacles_.unavailable_for(now);
        if (d <= duration::zero()) return {};
        return ", " + waited_text(d) + " of it with the database unavailable";
    }

    void fail_if_over() {
        const auto now = clock::now();
        const auto waited = std::chrono::duration_cast<duration>(now - start_);
        const std::optional<LockInfo> info = refusal_.first_holder();
        const std::string db = " [" + s_.url.redacted + "]";
        if (!waits_) contention_error(errc::busy, claimant_.refused_text(refusal_) + db, info);
        if (now >= deadline_)
            contention_error(errc::timeout,
                             claimant_.timeout_text(refusal_) + ", after waiting " +
                                 waited_text(waited) + unavailable_text(now) + db,
                             info);
        if (o_.on_waiting && !o_.on_waiting(info ? &*info : nullptr, waited))
            contention_error(errc::timeout,
                             claimant_.timeout_text(refusal_) + "; stopped waiting after " +
                                 waited_text(waited) + unavailable_text(now) + db,
                             info);
    }

    void join_line() {
        if (place_ || !refusal_.queue_exists || !claimant_.takes_place()) return;
        try {
            place_.emplace(s_, claimant_.names().front(), claimant_.locked_by(), s_.hub->inbox(),
                           queue_lease_);
            recheck_ = clock::now() + join_recheck;
        } catch (const error&) {
            // Wait without a place this time; join on the next look.
        }
    }

    // The listener connects now (once per Locker), after the place was
    // taken: arrival order is the order of the joins. A wake-up sent to our
    // inbox before it listened is caught by looking again at once. Only
    // near the front: PostgreSQL (before 19) signals every listening
    // session of the database on every NOTIFY, and each reads the
    // notification queue in a transaction of its own, so a line of
    // hundreds of listeners would cost the server hundreds of transactions
    // per hand-off. Farther back, the place is polled at its pace, as
    // without pushes. start() waits up to 2 s for a listener that cannot
    // connect, which must not be paid again at every look.
    void start_listening() {
        s_.hub->start();
        hub_started_ = true;
    }

    clock::time_point progress_bound(clock::time_point until, clock::time_point now) const {
        return o_.on_waiting ? std::min(until, now + o_.progress_every) : until;
    }

    // Behind others: the names are not ours to watch. Woken when the one
    // ahead leaves (pushed to our inbox), else polled at the pace of our
    // place.
    void sleep_behind() {
        const auto now = clock::now();
        watches_.clear();
        said_ = false;
        next_look_ = std::min(place_->renew_due(), place_->ahead_lapses());
        if (pushed()) next_look_ = std::min(next_look_, recheck_);
        if (!pushed()) {
            if (paced_look_ == clock::time_point::min()) {
                const duration pace =
                    poll_pace(place_->ahead(), place_->pace_seen(), queue_lease_ / 3);
                std::uniform_int_distribution<std::int64_t> spread(pace.count() * 3 / 4,
                                                                   pace.count());
                paced_look_ = now + duration(spread(jitter()));
            }
            next_look_ = std::min(next_look_, paced_look_);
        }
        // A look far ahead (a long place lease, far from the front) goes
        // without a server connection until then.
        if (next_look_ - now >= idle_connection_after &&
            place_->front_in() >= idle_connection_after)
            s_.pool->close_idle();
        const auto until = std::min({deadline_, place_->renew_due(), next_look_});
        s_.hub->wait_after(claimant_.names(), mark_, progress_bound(until, now));
    }

    // A release is pushed only while a listener says someone waits for it:
    // have ours say so for every name. True when it now does: then try
    // again before sleeping, so a release in between is not missed.
    bool watch_before_sleeping() {
        if (!pushed() || said_ || (place_ && place_->ahead() != 0)) return false;
        if (watches_.empty())
            for (const std::string& name : claimant_.names())
                watches_.push_back(std::make_unique<WatchGuard>(*s_.hub, name));
        const auto now = clock::now();
        const auto limit =
            progress_bound(std::min(sleep_limit(now), now + std::chrono::seconds(2)), now);
        bool all = true;
        for (const std::string& name : claimant_.names()) all = s_.hub->watched(name, limit) && all;
        said_ = all;
        return said_;
    }

    // Until the deadline, the place's renewal, or the first holder in the
    // way running out.
    clock::time_point sleep_limit(clock::time_point now) const {
        auto until = std::min(deadline_, place_ ? place_->renew_due() : deadline_);
        for (const Row& row : refusal_.holders) {
            if (row.seconds_left <= 0) continue;
            // Capped before converting: a row expiring centuries ahead (a
            // foreign program's "forever") would overflow the clock.
            const double ms = std::min(row.seconds_left * 1000.0 + 1.0, 86400000.0);
            until = std::min(until, now + duration(static_cast<std::int64_t>(ms)));
        }
        return until;
    }

    // Sleep until a release wakes us, a holder's lease runs out, or the
    // deadline. Without pushes: capped exponential backoff with jitter, so
    // many waiters do not poll in lockstep; the first in line alone polls
    // quickly, so a line costs the same whatever its length.
    void sleep_first_in_line() {
        const auto now = clock::now();
        auto until = sleep_limit(now);
        if (said_ && pushed()) {
            until = std::min(until, now + safety_net);
        } else {
            const micros cap(place_ ? 25'000 : 100'000);
            std::uniform_int_distribution<std::int64_t> spread(backoff_.count() / 2,
                                                               backoff_.count());
            until = std::min(until, now + micros(spread(jitter())));
            backoff_ = std::min(
                micros(static_cast<std::int64_t>(backoff_.count() * schedule_.growth)), cap);
        }
        // The progress hook runs after every attempt, and at least this often.
        s_.hub->wait_after(claimant_.names(), mark_, progress_bound(until, now));
    }

    std::mt19937& jitter() {
        if (!jitter_) jitter_.emplace(std::random_device{}());  // seeded only if we poll
        return *jitter_;
    }

    LockerState& s_;
    Claimant& claimant_;
    const LockOptions& o_;
    const bool waits_;
    const clock::time_point start_;
    const clock::time_point deadline_;
    const duration queue_lease_;
    const PollSchedule schedule_;
    micros backoff_;
    std::uint64_t mark_;
    Refusal refusal_;
    bool hub_started_ = false;  // after joining the line: the join keeps arrival order
    std::vector<std::unique_ptr<WatchGuard>> watches_;  // first in line: releases are pushed
    bool said_ = false;                // ... from the attempt after this turned true
    std::optional<QueuePlace> place_;  // our place in line (wait_queue.hpp), once we wait
    clock::time_point next_look_{};    // ... behind others: when it looks again
    // ... and, without pushes, when its pace says to: set after each look,
    // not at every wake-up (the progress hook wakes a waiter more often than
    // a slow line's pace, and would put the look off each time). min(): to
    // be worked out.
    clock::time_point paced_look_ = clock::time_point::min();
    clock::time_point recheck_ = clock::time_point::max();  // with pushes: join_recheck
    std::optional<std::mt19937> jitter_;
    Obstacles obstacles_;  // the database unavailable meanwhile (obstacle.hpp)
};

}  // namespace

void wait_for(LockerState& s, Claimant& claimant, const LockOptions& o) {
    WaitLoop(s, claimant, o).run();
}

}  // namespace sqlock::detail
