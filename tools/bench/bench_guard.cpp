// 4d. Guarded writes: an application's transaction of one insert, with the
// guard before the insert (RawClient::guarded_write_transaction: through
// sqlock's adapter kept for the connection where it keeps the statement
// prepared, else the statement Lock::guard_statement() writes), against the
// same transaction without it; one client, alternating rounds on one table.
// Target: at least 0.8x. Beside it, where the cost goes: the least any
// guard costs, one more statement that does nothing (SELECT 1), against the
// transaction without it; and the guard against that statement in its
// place, its own work beyond the round trip (a target where the backend
// names one: BenchHooks::guard_statement_goal).
#include "bench_database.hpp"
#include "rates.hpp"
#include "sections.hpp"

namespace sqlock_bench {

void bench_guard(Context& ctx, const BackendTarget& target) {
    BenchDatabase db(target, "guard");
    sqlock::Locker locker = db.open();
    sqlock::Lock lock = locker.lock("bench-guard");
    const std::string nothing = "SELECT 1";
    std::unique_ptr<RawClient> raw = db.raw();
    raw->write_transaction("");  // makes the data table, outside the rounds
    const Cycle guarded = [&] { raw->guarded_write_transaction(lock); };
    auto with = [&](const std::string& extra) -> Cycle {
        return [&raw, extra] { raw->write_transaction(extra); };
    };
    auto add_row = [&](const std::string& operation, const Cycle& ours, const Cycle& baseline,
                       const std::string& baseline_name, Goal goal, const std::string& note) {
        Comparison c = compare_rates(ours, baseline, ctx.scale.rounds, ctx.scale.round_seconds);
        Result row = comparison_row("guard", target, operation, c, baseline_name, note);
        row.unit = "tx/s";
        row.goal = goal;
        ctx.report.add(row);
    };
    add_row("write transaction, guarded", guarded, with(""), "unguarded", Goal::ratio_at_least(0.8),
            "BEGIN; guard; INSERT; COMMIT vs BEGIN; INSERT; COMMIT, one client");
    add_row("write transaction, SELECT 1 added", with(nothing), with(""), "unguarded", Goal::none(),
            "the floor of any guard: one more round trip that does nothing");
    add_row("write transaction, guard vs SELECT 1", guarded, with(nothing), "SELECT 1 instead",
            target.hooks().guard_statement_goal
                ? Goal::ratio_at_least(*target.hooks().guard_statement_goal)
                : Goal::none(),
            "the guard's own work: the check, the row lock, the routine call");
    lock.release();
}

}  // namespace sqlock_bench
