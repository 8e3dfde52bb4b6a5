#include "wait_queue.hpp"

#include <algorithm>

#include "locker_state.hpp"
#include "records.hpp"

namespace sqlock::detail {

QueuePlace::QueuePlace(LockerState& s, std::string name, std::string waiter, std::string inbox,
                       duration lease)
    : s_(s), name_(std::move(name)), waiter_(std::move(waiter)), lease_(lease) {
    const std::vector<Value> params{Value::text(name_), Value::text(waiter_),
                                    Value::text(std::move(inbox)), Value::millis(lease_)};
    renewed_ = clock::now();
    // Not retried on a broken connection: the first try may have joined,
    // and a second row would stand ahead of this one until its lease ran
    // out. The caller waits without a place, and joins on its next look.
    const Rows r = s_.pool->with(
        [&](Connection& c) { return c.query(Query::queue_join, params); },
        /*retry_on_broken=*/false);
    const auto& row = first_row(r, Query::queue_join, params);
    ticket_ = as_int64(row.at(0));
    ahead_ = as_int64(row.at(1));
}

bool QueuePlace::poll() {
    const std::vector<Value> params{Value::integer(ticket_), Value::text(waiter_),
                                    Value::millis(lease_), Value::text(name_)};
    const auto sent = clock::now();
    const Rows r = s_.pool->with([&](Connection& c) { return c.query(Query::queue_poll, params); });
    const auto& row = first_row(r, Query::queue_poll, params);
    if (!as_bool(row.at(0))) return false;
    renewed_ = sent;
    ahead_ = as_int64(row.at(1));
    return true;
}

void QueuePlace::leave() noexcept {
    if (left_) return;
    left_ = true;
    try {
        const std::vector<Value> params{Value::integer(ticket_), Value::text(waiter_)};
        s_.pool->with([&](Connection& c) { return c.query(Query::queue_leave, params); });
    } catch (...) {
        // The row leaves the line when its lease runs out.
    }
}

duration poll_pace(std::int64_t ahead, duration renew) {
    // 50 ms for the second in line, then the square of the place: a line
    // of any length polls about 33 times a second in all, besides the
    // renewals, and the one about to be first looks often enough to see
    // the front leave within a job of 50 ms.
    const std::int64_t k = std::max<std::int64_t>(ahead, 1);
    const std::int64_t ms = k > 1000 ? INT64_MAX / 2 : 50 * k * k;
    return std::min(duration(ms), renew);
}

}  // namespace sqlock::detail
