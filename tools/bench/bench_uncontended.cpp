// 1. Uncontended: one client takes and releases one name as fast as it can,
// sqlock and the raw client alternating on the same table.
#include <stdexcept>

#include "bench_database.hpp"
#include "rates.hpp"
#include "sections.hpp"

namespace sqlock_bench {

void bench_uncontended(Context& ctx, const BackendTarget& target) {
    BenchDatabase db(target, "uncontended");
    sqlock::Locker locker = db.open();
    auto raw = db.raw();
    const std::string name = "bench-uncontended";

    Cycle with_sqlock = [&] {
        auto lock = locker.try_lock(name);
        if (!lock) throw std::runtime_error("uncontended lock found held");
        lock->release();
    };
    Cycle with_raw = [&] {
        std::int64_t id = raw->try_acquire(name);
        if (!id) throw std::runtime_error("uncontended raw lock found held");
        raw->release(id);
    };
    Comparison c = compare_rates(with_sqlock, with_raw, ctx.scale.rounds, ctx.scale.round_seconds);

    Result row = make_row("uncontended", target, "acquire+release, 1 client", "cycles/s");
    row.sqlock = c.a;
    row.baseline = c.b;
    row.baseline_name = "raw C API";
    row.paired_ratio = c.ratio;
    row.goal = Goal::ratio_at_least(0.9);
    row.note = "try_lock()+release() vs INSERT ... RETURNING id + DELETE; medians of " +
               std::to_string(ctx.scale.rounds) + " alternating rounds of " +
               format_value(ctx.scale.round_seconds, "s") + " each";
    ctx.report.add(row);
}

}  // namespace sqlock_bench
