// What Locker::lock_activity() reads: the live rows, the lines and the elections of a
// lock table, gathered per name for monitoring. The rows are named as
// row_names.hpp says: "name#N" is a semaphore's slot, "name#shared-..." a
// shared holder (whose marker row "name" is no holder of its own).
#include "monitoring/lock_activity.hpp"

#include <map>

#include "contract/records.hpp"
#include "contract/row_names.hpp"

namespace sqlock {

namespace {

// The name a live row counts under, and whether it is a shared holder's.
std::pair<std::string, bool> counted_name(const std::string& lockstring) {
    if (auto shared = detail::shared_name_of(lockstring)) return {*shared, true};
    const std::size_t at = detail::slot_suffix_at(lockstring);
    if (at != std::string::npos && at > 0) return {lockstring.substr(0, at), false};
    return {lockstring, false};
}

struct Gathered {
    NameActivity activity;
    bool has_shared = false;
    // A row named exactly as the name: a plain lock, a leader, or a shared
    // hold's marker (known as such once holders are seen).
    bool own_row = false;
    std::int64_t own_id = 0;
    double own_age = 0.0, own_left = 0.0;
};

void hold(NameActivity& a, double age, double left) {
    a.holder_age_seconds = a.holders == 0 ? age : std::max(a.holder_age_seconds, age);
    a.holder_seconds_left = a.holders == 0 ? left : std::min(a.holder_seconds_left, left);
    ++a.holders;
}

}  // namespace

LockActivity detail::lock_activity(LockerState& state) {
    std::map<std::string, Gathered> by_name;
    LockActivity out;
    state.pool->with([&](detail::Connection& c) {
        by_name.clear();
        const detail::Rows counts = c.query(detail::Query::lock_counts, {});
        const auto& row = detail::first_row(counts, detail::Query::lock_counts, {});
        out.counts.held = detail::as_int64(row.at(0));
        out.counts.expired = detail::as_int64(row.at(1)) - out.counts.held;
        for (const auto& r : c.query(detail::Query::live_locks, {}).rows) {
            const std::string& lockstring = detail::as_text(r.at(0));
            const auto [name, shared] = counted_name(lockstring);
            Gathered& g = by_name[name];
            g.activity.name = name;
            const double age = detail::as_double(r.at(2)), left = detail::as_double(r.at(3));
            if (lockstring == name) {
                g.own_row = true;
                g.own_id = detail::as_int64(r.at(1));
                g.own_age = age;
                g.own_left = left;
                continue;
            }
            g.has_shared |= shared;
            hold(g.activity, age, left);
        }
        out.waiter_ages = false;
        if (c.has(detail::SideTable::queue)) {
            // A queue made before its join times were kept: the lengths alone.
            const detail::Rows joined = c.query(detail::Query::queue_joined, {});
            out.waiter_ages = !joined.rows.empty() && detail::as_bool(joined.rows[0].at(0));
            const auto key =
                out.waiter_ages ? detail::Query::queue_waits : detail::Query::queue_lengths;
            for (const auto& r : c.query(key, {}).rows) {
                Gathered& g = by_name[detail::as_text(r.at(0))];
                g.activity.name = detail::as_text(r.at(0));
                g.activity.waiters = detail::as_int64(r.at(1));
                if (out.waiter_ages) g.activity.oldest_waiter_seconds = detail::as_double(r.at(2));
            }
        }
        if (c.has(detail::SideTable::leaders))
            for (const auto& r : c.query(detail::Query::leader_names, {}).rows) {
                Gathered& g = by_name[detail::as_text(r.at(0))];
                g.activity.name = detail::as_text(r.at(0));
                g.activity.election = true;
            }
        return 0;
    });
    for (auto& [name, g] : by_name) {
        // A shared hold's marker is no holder; any other own row is.
        if (g.own_row && !g.has_shared) {
            hold(g.activity, g.own_age, g.own_left);
            if (g.activity.election) g.activity.leader_id = g.own_id;
        }
        out.names.push_back(std::move(g.activity));
    }
    return out;
}

}  // namespace sqlock
