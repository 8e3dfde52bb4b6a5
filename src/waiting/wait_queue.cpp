#include "waiting/wait_queue.hpp"

#include <algorithm>

#include "contract/records.hpp"
#include "state/locker_state.hpp"

namespace sqlock::detail {
namespace {

// `ms` (< 0: never) after `sent`, plus a millisecond for the rounding of
// the database's answer, so the look finds the place lapsed.
QueuePlace::clock::time_point lapse_at(QueuePlace::clock::time_point sent, std::int64_t ms) {
    if (ms < 0) return QueuePlace::clock::time_point::max();
    return sent + std::chrono::milliseconds(std::min<std::int64_t>(ms, 86400000) + 1);
}

// How long a line moving at `per_second` places a second (0: not seen to
// move yet, guessed at 10 ms a place) takes to move `places` places, in ms.
double expected_ms(double places, double per_second) {
    const double ms = per_second > 0 ? places / per_second * 1000.0 : 10.0 * places;
    return std::min(ms, 86400000.0);
}

}  // namespace

QueuePlace::QueuePlace(LockerState& s, std::string name, std::string waiter, std::string inbox,
                       duration lease)
    : s_(s), name_(std::move(name)), waiter_(std::move(waiter)), lease_(lease) {
    const std::vector<Value> params{Value::text(name_), Value::text(waiter_),
                                    Value::text(std::move(inbox)), Value::millis(lease_)};
    renewed_ = clock::now();
    // Not retried on a broken connection: the first try may have joined,
    // and a second row would stand ahead of this one until its lease ran
    // out. The caller waits without a place, and joins on its next look.
    const Rows r = s_.pool->with([&](Connection& c) { return c.query(Query::queue_join, params); },
                                 /*retry_on_broken=*/false);
    const auto& row = first_row(r, Query::queue_join, params);
    ticket_ = as_int64(row.at(0));
    ahead_ = as_int64(row.at(1));
    ahead_lapses_ = lapse_at(renewed_, as_int64(row.at(2)));
    std::lock_guard<std::mutex> guard(s_.line_speeds_mutex);
    auto it = s_.line_speeds.find(name_);
    if (it != s_.line_speeds.end()) per_second_ = it->second;
}

bool QueuePlace::poll() {
    const std::vector<Value> params{Value::integer(ticket_), Value::text(waiter_),
                                    Value::millis(lease_), Value::text(name_)};
    const auto sent = clock::now();
    const Rows r = s_.pool->with([&](Connection& c) { return c.query(Query::queue_poll, params); });
    const auto& row = first_row(r, Query::queue_poll, params);
    if (!as_bool(row.at(0))) return false;
    const std::int64_t ahead = as_int64(row.at(1));
    const double seconds = std::chrono::duration<double>(sent - renewed_).count();
    const bool moved = ahead < ahead_;
    // A speed is read only between two looks that both saw the line move:
    // the first look after a stall (a long hold) cannot tell when in its
    // interval the line started to move again, and reading the stall as
    // part of the speed made waiters look several times too seldom just
    // as the line got going (idle spells of up to half a second between
    // 30 ms holds, measured in the benchmark's queue section).
    if (moved && moving_ && seconds > 0) {
        // Smoothed: one quick hand-off must not make the next look early.
        const double seen = static_cast<double>(ahead_ - ahead) / seconds;
        per_second_ = per_second_ > 0 ? 0.5 * per_second_ + 0.5 * seen : seen;
        std::lock_guard<std::mutex> guard(s_.line_speeds_mutex);
        if (s_.line_speeds.size() > 1000) s_.line_speeds.clear();  // bounded
        s_.line_speeds[name_] = per_second_;
    }
    moving_ = moved;
    renewed_ = sent;
    ahead_ = ahead;
    ahead_lapses_ = lapse_at(sent, as_int64(row.at(2)));
    return true;
}

void QueuePlace::leave() noexcept {
    if (left_) return;
    left_ = true;
    try {
        const std::vector<Value> params{Value::integer(ticket_), Value::text(waiter_)};
        // Not retried on a broken connection: leaving is also the way out
        // of a wait that failed because the database cannot be reached,
        // and the caller's error must not wait twice for it.
        s_.pool->with([&](Connection& c) { return c.query(Query::queue_leave, params); },
                      /*retry_on_broken=*/false);
    } catch (...) {
        // The row leaves the line when its lease runs out.
    }
}

duration QueuePlace::front_in() const noexcept {
    return duration(
        static_cast<std::int64_t>(expected_ms(static_cast<double>(ahead_), per_second_)));
}

duration poll_pace(std::int64_t ahead, double per_second, duration renew) {
    // Until the line has been seen to move, a guess of 10 ms a place (a
    // slower line costs a few more looks; a faster one, guessed slow, would
    // idle at its front until the look). Then two thirds of the time it
    // should take to reach the front: each look cuts the distance to a
    // third, so a waiter looks a handful of times in all, and next to the
    // front it looks within half a hand-off.
    const double places = static_cast<double>(std::max<std::int64_t>(ahead, 1));
    const double share = ahead <= 1 ? 0.5 : 2.0 / 3.0;
    const double ms = std::max(2.0, expected_ms(places, per_second) * share);
    return std::min(duration(static_cast<std::int64_t>(ms)), renew);
}

}  // namespace sqlock::detail
