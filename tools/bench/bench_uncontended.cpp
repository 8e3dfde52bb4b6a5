// 1. Uncontended: one client takes and releases one name as fast as it can,
// sqlock and the raw client alternating on the same table. Where the
// backend has them, other ways to the same database (a pooler) against the
// direct one (through a pooler, each lock kind), and the cost of each of
// sqlock's guarantees alone.
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_database.hpp"
#include "rates.hpp"
#include "sections.hpp"

namespace sqlock_bench {
namespace {

// sqlock on `url` against sqlock on the direct connection, same table: one
// acquire+release of `cycle` each.
void against_direct(Context& ctx, const BackendTarget& target, const BenchDatabase& db,
                    sqlock::Locker& direct, const std::string& url, std::string operation,
                    std::string note, const std::function<void(sqlock::Locker&)>& cycle) {
    sqlock::LockerOptions options;
    options.table = db.table();
    options.auto_init = sqlock::LockerOptions::auto_init_mode::never;
    sqlock::Locker other(url, options);
    Comparison c = compare_rates([&] { cycle(other); }, [&] { cycle(direct); }, ctx.scale.rounds,
                                 ctx.scale.round_seconds);
    Result row = make_row("uncontended", target, std::move(operation), "cycles/s");
    row.sqlock = c.a;
    row.baseline = c.b;
    row.baseline_name = "sqlock direct";
    row.paired_ratio = c.ratio;
    row.goal = Goal::none();
    row.note = std::move(note);
    ctx.report.add(row);
}

// The other lock kinds through a detour that carries every one (a pooler):
// a slot, a set and a shared hold, each against itself direct.
void kinds_against_direct(Context& ctx, const BackendTarget& target, const BenchDatabase& db,
                          sqlock::Locker& direct, const BenchHooks::Detour& d) {
    const std::string how = ", " + d.kind_suffix;
    const std::string note = "each against the same on the direct connection";
    against_direct(ctx, target, db, direct, d.url, "slot acquire+release, 0 of 1 taken" + how, note,
                   [](sqlock::Locker& locker) {
                       auto slot = locker.try_acquire_slot("bench-kinds-sem", 1);
                       if (!slot) throw std::runtime_error("uncontended slot found held");
                       slot->release();
                   });
    std::vector<std::string> ten;
    for (int i = 0; i < 10; ++i) ten.push_back("bench-kinds-set-" + std::to_string(i));
    against_direct(ctx, target, db, direct, d.url, "set of 10 acquire+release" + how, note,
                   [&](sqlock::Locker& locker) {
                       auto set = locker.try_lock_all(ten);
                       if (!set) throw std::runtime_error("uncontended lock set found held");
                       set->release();
                   });
    sqlock::LockOptions shared;
    shared.mode = sqlock::lock_mode::shared;
    against_direct(ctx, target, db, direct, d.url, "shared acquire+release" + how, note,
                   [&](sqlock::Locker& locker) {
                       auto lock = locker.try_lock("bench-kinds-shared", shared);
                       if (!lock) throw std::runtime_error("uncontended shared lock found held");
                       lock->release();
                   });
}

// What each of sqlock's guarantees costs alone: the raw client with one
// layer of sqlock's acquire+release added at a time (the backend's
// BenchHooks::layers), each against the raw prepared statements in the same
// run.
void layered_rows(Context& ctx, const BackendTarget& target, RawClient& raw) {
    const std::string name = "bench-layers";
    Cycle plain = [&] {
        std::int64_t id = raw.try_acquire(name);
        if (!id) throw std::runtime_error("uncontended raw lock found held");
        raw.release(id);
    };
    const BenchHooks& hooks = target.hooks();
    for (std::size_t up_to = 0; up_to < hooks.layers.size(); ++up_to) {
        Cycle with = [&, up_to] {
            if (!raw.cycle_layer(up_to, name))
                throw std::runtime_error("uncontended layered lock found held");
        };
        Comparison c = compare_rates(with, plain, ctx.scale.rounds, ctx.scale.round_seconds);
        ctx.report.add(comparison_row(
            "uncontended", target, hooks.layer_operation + hooks.layers[up_to], c, "raw C API",
            "the cost of sqlock's guarantees one by one: not sqlock itself"));
    }
}

}  // namespace

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
    row.note = "try_lock()+release() vs " + target.hooks().raw_statements + "; medians of " +
               std::to_string(ctx.scale.rounds) + " alternating rounds of " +
               format_value(ctx.scale.round_seconds, "s") + " each";
    ctx.report.add(row);
    // The ways to the same database that the backend prices against the
    // direct one (a pooler), then its guarantees one by one.
    if (const auto detours = target.hooks().detours) {
        const auto all = detours(target.location, ctx.options.backend_options);
        for (const BenchHooks::Detour& d : all)
            against_direct(ctx, target, db, locker, d.url, d.operation, d.note,
                           [&](sqlock::Locker& l) {
                               auto lock = l.try_lock("bench-" + d.operation);
                               if (!lock) throw std::runtime_error("uncontended lock found held");
                               lock->release();
                           });
        for (const BenchHooks::Detour& d : all)
            if (!d.kind_suffix.empty()) kinds_against_direct(ctx, target, db, locker, d);
    }
    layered_rows(ctx, target, *raw);
}

}  // namespace sqlock_bench
