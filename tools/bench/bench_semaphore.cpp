// 4b. Semaphores: acquire+release of a slot when all slots but the last are
// held by others, for 1, 10 and 100 slots. The baseline takes the lowest
// free slot in a single SQL statement.
#include <stdexcept>

#include "bench_database.hpp"
#include "rates.hpp"
#include "sections.hpp"

namespace sqlock_bench {
namespace {

// Where the backend names them (BenchHooks::guarded_slot): what the
// guarantees of sqlock's acquire cost a slot alone, the raw statement inside
// them against the raw statement.
void guarded_slot_row(Context& ctx, const BackendTarget& target, RawClient& raw,
                      const std::string& name, int capacity) {
    Cycle guarded = [&] {
        std::int64_t id = raw.try_acquire_slot_guarded(name, capacity);
        if (!id) throw std::runtime_error("guarded raw semaphore: no free slot");
        raw.release(id);
    };
    Cycle plain = [&] {
        std::int64_t id = raw.try_acquire_slot(name, capacity);
        if (!id) throw std::runtime_error("raw semaphore: no free slot");
        raw.release(id);
    };
    Comparison c = compare_rates(guarded, plain, ctx.scale.rounds, ctx.scale.round_seconds / 2);
    ctx.report.add(comparison_row(
        "semaphore", target,
        "slot, " + target.hooks().guarded_slot + ", " + std::to_string(capacity - 1) + " of " +
            std::to_string(capacity) + " taken",
        c, "raw, one statement", "the cost of sqlock's guarantees alone: not sqlock itself"));
}

}  // namespace

void bench_semaphore(Context& ctx, const BackendTarget& target) {
    BenchDatabase db(target, "semaphore");
    sqlock::Locker locker = db.open();
    auto raw = db.raw();
    for (int capacity : ctx.scale.capacities) {
        const std::string name = "bench-sem" + std::to_string(capacity);
        // Slots 1..capacity-1 are held (rows "name#1" ...); the last is free.
        if (capacity > 1) raw->fill(name + "#", 1, capacity - 1, /*expired=*/false);
        Cycle with_sqlock = [&] {
            auto slot = locker.try_acquire_slot(name, capacity);
            if (!slot || slot->slot() != capacity)
                throw std::runtime_error("semaphore: expected the last slot to be free");
            slot->release();
        };
        Cycle with_raw = [&] {
            std::int64_t id = raw->try_acquire_slot(name, capacity);
            if (!id) throw std::runtime_error("raw semaphore: no free slot");
            raw->release(id);
        };
        Comparison c =
            compare_rates(with_sqlock, with_raw, ctx.scale.rounds, ctx.scale.round_seconds / 2);
        Result row = make_row("semaphore", target,
                              "slot acquire+release, " + std::to_string(capacity - 1) + " of " +
                                  std::to_string(capacity) + " slots taken",
                              "cycles/s");
        row.sqlock = c.a;
        row.baseline = c.b;
        row.baseline_name = "raw, one statement";
        row.paired_ratio = c.ratio;
        // The backend's target, where it has one: slots at that fraction of
        // the one raw statement or better.
        if (const auto goal = target.hooks().semaphore_goal) row.goal = Goal::ratio_at_least(*goal);
        ctx.report.add(row);
        if (!target.hooks().guarded_slot.empty())
            guarded_slot_row(ctx, target, *raw, name, capacity);
    }
}

}  // namespace sqlock_bench
