// 4d. Guarded writes: an application's transaction of one insert, with the
// guard sqlock::guard runs (Lock::guard_statement()) before the insert,
// against the same transaction without it; one client, alternating rounds
// on one table. Target: at least 0.8x. Beside it, where the cost goes: the
// least any guard costs, one more statement that does nothing (SELECT 1),
// against the transaction without it; and the guard against that statement
// in its place, its own work beyond the round trip.
#include "bench_database.hpp"
#include "rates.hpp"
#include "sections.hpp"

namespace sqlock_bench {

void bench_guard(Context& ctx, const BackendTarget& target) {
    BenchDatabase db(target, "guard");
    sqlock::Locker locker = db.open();
    sqlock::Lock lock = locker.lock("bench-guard");
    const std::string guard = lock.guard_statement().literal;
    const std::string nothing = "SELECT 1";
    std::unique_ptr<RawClient> raw = db.raw();
    raw->write_transaction("");  // makes the data table, outside the rounds
    auto add_row = [&](const std::string& operation, const std::string& ours,
                       const std::string& baseline, const std::string& baseline_name, Goal goal,
                       const std::string& note) {
        Comparison c = compare_rates([&] { raw->write_transaction(ours); },
                                     [&] { raw->write_transaction(baseline); }, ctx.scale.rounds,
                                     ctx.scale.round_seconds);
        Result row = comparison_row("guard", target, operation, c, baseline_name, note);
        row.unit = "tx/s";
        row.goal = goal;
        ctx.report.add(row);
    };
    add_row("write transaction, guarded", guard, "", "unguarded", Goal::ratio_at_least(0.8),
            "BEGIN; guard; INSERT; COMMIT vs BEGIN; INSERT; COMMIT, one client");
    add_row("write transaction, SELECT 1 added", nothing, "", "unguarded", Goal::none(),
            "the floor of any guard: one more round trip that does nothing");
    add_row("write transaction, guard vs SELECT 1", guard, nothing, "SELECT 1 instead",
            Goal::none(), "the guard's own work: the check, the row lock, the routine call");
    lock.release();
}

}  // namespace sqlock_bench
