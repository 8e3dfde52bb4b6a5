// 6. The command: what `sqlock run NAME -- true` adds to a command's start,
// against `flock -n FILE true` (the classic single-host lock) and `true`.
// The three run in rotating order; medians of wall time, and of the peak
// resident set of the same runs, so that both start-up costs come from one
// set of processes.
#include "cli_runs.hpp"
#include "sections.hpp"
#include "stats.hpp"

namespace sqlock_bench {

void bench_command(Context& ctx, const BackendTarget& target) {
    CliRuns cli(ctx.options, ctx.scratch_dir);
    std::vector<double> with_sqlock, with_flock, alone;
    std::vector<double> sqlock_mib, flock_mib;
    for (int r = 0; r < ctx.scale.command_runs; ++r) {
        for (int k = 0; k < 3; ++k) {
            switch ((k + r) % 3) {
                case 0: {
                    const CommandRun run = cli.sqlock_run();
                    with_sqlock.push_back(run.wall_ms);
                    sqlock_mib.push_back(run.maxrss_kib / 1024.0);
                    break;
                }
                case 1: {
                    const CommandRun run = cli.flock_run();
                    with_flock.push_back(run.wall_ms);
                    flock_mib.push_back(run.maxrss_kib / 1024.0);
                    break;
                }
                case 2:
                    alone.push_back(cli.true_run().wall_ms);
                    break;
            }
        }
    }
    const std::string runs = "median of " + std::to_string(ctx.scale.command_runs) +
                             " runs each, rotating order; embedded default database";
    Result vs_flock = make_row("command", target, "sqlock run NAME -- true, wall time", "ms");
    vs_flock.sqlock = median(with_sqlock);
    vs_flock.baseline = median(with_flock);
    vs_flock.baseline_name = "flock -n FILE true";
    vs_flock.goal = Goal::ratio_at_most(1.5);  // issue 13's start-up target
    vs_flock.note = runs + "; p90 " + format_value(percentile(with_sqlock, 90), "ms") + " (flock " +
                    format_value(percentile(with_flock, 90), "ms") + ")";
    ctx.report.add(vs_flock);

    Result vs_true = make_row("command", target, "sqlock run NAME -- true, wall time", "ms");
    vs_true.sqlock = median(with_sqlock);
    vs_true.baseline = median(alone);
    vs_true.baseline_name = "true";
    ctx.report.add(vs_true);

    Result rss = make_row("command", target, "sqlock run NAME -- true, peak RSS", "MiB");
    rss.sqlock = median(sqlock_mib);
    rss.baseline = median(flock_mib);
    rss.baseline_name = "flock -n FILE true";
    rss.goal = Goal::ratio_at_most(1.5);
    // wait4() reports the larger of the process's own peak and that of the
    // children it waited for (`true`, about 1 MiB): in effect the command's.
    rss.note = "wait4() ru_maxrss of the same runs as the wall times, median of " +
               std::to_string(ctx.scale.command_runs) + " runs each; max " +
               format_value(maximum(sqlock_mib), "MiB") + " (flock " +
               format_value(maximum(flock_mib), "MiB") + ")";
    ctx.report.add(rss);
}

}  // namespace sqlock_bench
