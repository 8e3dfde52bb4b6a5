// 4c. Lock sets: a set of 1, 10 and 100 names acquired and released, against
// the same names taken and released one by one (try_lock, in name order) by
// the same client; and a set of 10 against a single lock, the cost a set
// adds over one name; and a shared hold against an exclusive one, each
// acquired and released alone. Alternating rounds on one table.
#include <functional>
#include <stdexcept>

#include "bench_database.hpp"
#include "rates.hpp"
#include "sections.hpp"

namespace sqlock_bench {
namespace {

std::vector<std::string> set_names(int n) {
    std::vector<std::string> names;
    for (int i = 0; i < n; ++i) names.push_back("bench-set-" + std::to_string(1000 + i));
    return names;
}

void take_set(sqlock::Locker& locker, const std::vector<std::string>& names) {
    auto set = locker.try_lock_all(names);
    if (!set) throw std::runtime_error("uncontended lock set found held");
    set->release();
}

void take_one_by_one(sqlock::Locker& locker, const std::vector<std::string>& names) {
    std::vector<sqlock::Lock> held;
    held.reserve(names.size());
    for (const auto& name : names) {
        auto lock = locker.try_lock(name);
        if (!lock) throw std::runtime_error("uncontended lock found held");
        held.push_back(std::move(*lock));
    }
    for (auto& lock : held) lock.release();
}

}  // namespace

void bench_sets(Context& ctx, const BackendTarget& target) {
    BenchDatabase db(target, "sets");
    sqlock::Locker locker = db.open();
    // One row: `ours` against `baseline`, alternating rounds.
    auto add_row = [&](const std::string& operation, const std::function<void()>& ours,
                       const std::function<void()>& baseline, const std::string& baseline_name,
                       Goal goal, const std::string& note) {
        Comparison c = compare_rates(ours, baseline, ctx.scale.rounds, ctx.scale.round_seconds);
        Result row = comparison_row("sets", target, operation, c, baseline_name, note);
        row.goal = goal;
        ctx.report.add(row);
    };
    auto take = [&](const std::string& name, const sqlock::LockOptions& o) {
        auto lock = locker.try_lock(name, o);
        if (!lock) throw std::runtime_error("uncontended lock found held");
        lock->release();
    };
    for (int n : {1, 10, 100}) {
        const auto names = set_names(n);
        add_row(
            "set of " + std::to_string(n) + " acquire+release", [&] { take_set(locker, names); },
            [&] { take_one_by_one(locker, names); }, "the names one by one", Goal::none(),
            "try_lock_all()+release() vs try_lock()+release() of each name, in one client");
    }
    const auto ten = set_names(10);
    // A set of 10 costs at most twice one lock.
    add_row(
        "set of 10 against one lock", [&] { take_set(locker, ten); },
        [&] { take("bench-set-single", {}); }, "one lock", Goal::ratio_at_least(0.5),
        "try_lock_all() of 10 names vs try_lock() of one, each with its release");

    // Where a set of 10's cost goes, each part against the one before it:
    // the database's own floor (ten rows inserted by one statement, then
    // deleted by another, against one row: what any one-row-per-name set
    // pays), then sqlock's set against that floor (the turns, the queue
    // check, the owner text, the fencing order and the notifications).
    auto raw = db.raw();
    add_row(
        "raw: 10 rows against one row", [&] { raw->cycle_many(ten); },
        [&] {
            const std::int64_t id = raw->try_acquire("bench-raw-single");
            if (!id) throw std::runtime_error("uncontended raw lock found held");
            raw->release(id);
        },
        "raw one row", Goal::none(),
        "the floor: a multi-row INSERT and a DELETE of 10 names vs one row's INSERT and DELETE");
    add_row(
        "set of 10 against raw 10 rows", [&] { take_set(locker, ten); },
        [&] { raw->cycle_many(set_names(10)); }, "raw 10 rows", Goal::none(),
        "try_lock_all()+release() vs the raw multi-row INSERT and DELETE of the same names");

    // A shared hold writes the marker and its own row under the name's
    // turn, and its release shrinks or deletes the marker.
    sqlock::LockOptions shared;
    shared.mode = sqlock::lock_mode::shared;
    add_row(
        "shared against exclusive", [&] { take("bench-shared", shared); },
        [&] { take("bench-exclusive", {}); }, "exclusive", Goal::none(),
        "try_lock() shared vs exclusive, each with its release, uncontended");

    // The same on a table of its own. The rows above leave tens of
    // thousands of deleted rows whose expiry is an hour ahead; a shared
    // release's look for the other holders of the name walks their entries
    // on PostgreSQL (by the expires index: see shared-locks.md), an
    // exclusive release never does.
    BenchDatabase own_table(target, "shared");
    sqlock::Locker own_locker = own_table.open();
    auto take_own = [&](const std::string& name, const sqlock::LockOptions& o) {
        auto lock = own_locker.try_lock(name, o);
        if (!lock) throw std::runtime_error("uncontended lock found held");
        lock->release();
    };
    add_row(
        "shared against exclusive, table of its own", [&] { take_own("bench-shared", shared); },
        [&] { take_own("bench-exclusive", {}); }, "exclusive", Goal::none(),
        "as the row before, on a table that only these two use");
}

}  // namespace sqlock_bench
