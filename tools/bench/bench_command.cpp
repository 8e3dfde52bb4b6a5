// 6. The command: what `sqlock run NAME -- true` adds to a command's start,
// against `flock -n FILE true` (the classic single-host lock), `true`, and
// the least a program can do for the same lock row with the default
// database's C API (its backend's BenchHooks::command_baseline). They run in rotating order;
// medians of wall time, and of the peak resident set of the same runs, so that both start-up costs
// come from one set of processes.
#include "cli_runs.hpp"
#include "sections.hpp"
#include "stats.hpp"

namespace sqlock_bench {

void bench_command(Context& ctx, const BackendTarget& target) {
    CliRuns cli(ctx.options, ctx.scratch_dir);
    if (cli.has_raw()) cli.raw_run();  // its first run is not timed either
    std::vector<double> with_sqlock, with_flock, alone, with_raw;
    std::vector<double> sqlock_mib, flock_mib, raw_mib;
    const int kinds = cli.has_raw() ? 4 : 3;
    for (int r = 0; r < ctx.scale.command_runs; ++r) {
        for (int k = 0; k < kinds; ++k) {
            switch ((k + r) % kinds) {
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
                case 3: {
                    const CommandRun run = cli.raw_run();
                    with_raw.push_back(run.wall_ms);
                    raw_mib.push_back(run.maxrss_kib / 1024.0);
                    break;
                }
            }
        }
    }
    const std::string runs = "median of " + std::to_string(ctx.scale.command_runs) +
                             " runs each, rotating order; embedded default database";
    Result vs_flock = make_row("command", target, "sqlock run NAME -- true, wall time", "ms");
    vs_flock.sqlock = median(with_sqlock);
    vs_flock.baseline = median(with_flock);
    vs_flock.baseline_name = "flock -n FILE true";
    // The start-up target: a job run under sqlock starts within 1.5x of one
    // run under flock(1), the file lock it stands in for on one host.
    vs_flock.goal = Goal::ratio_at_most(1.5);
    vs_flock.note = runs + "; p90 " + format_value(percentile(with_sqlock, 90), "ms") + " (flock " +
                    format_value(percentile(with_flock, 90), "ms") + ")";
    ctx.report.add(vs_flock);

    Result vs_true = make_row("command", target, "sqlock run NAME -- true, wall time", "ms");
    vs_true.sqlock = median(with_sqlock);
    vs_true.baseline = median(alone);
    vs_true.baseline_name = "true";
    ctx.report.add(vs_true);

    const std::string& raw_name = cli.raw_name();
    if (cli.has_raw()) {
        Result vs_raw = make_row("command", target, "sqlock run NAME -- true, wall time", "ms");
        vs_raw.sqlock = median(with_sqlock);
        vs_raw.baseline = median(with_raw);
        vs_raw.baseline_name = raw_name;
        ctx.report.add(vs_raw);
    }

    Result rss = make_row("command", target, "sqlock run NAME -- true, peak RSS", "MiB");
    rss.sqlock = median(sqlock_mib);
    rss.baseline = median(flock_mib);
    rss.baseline_name = "flock -n FILE true";
    rss.goal = Goal::ratio_at_most(1.5);
    // wait4() reports the larger of the process's own peak and that of the
    // children it waited for (`true`, about 1 MiB): in effect the command's.
    // Each is started from sqlock-bench-probe, so none inherits this
    // benchmark's peak (probe_main.cpp).
    rss.note =
        "wait4() ru_maxrss of the same runs as the wall times, each started by a small "
        "probe program, median of " +
        std::to_string(ctx.scale.command_runs) + " runs each; max " +
        format_value(maximum(sqlock_mib), "MiB") + " (flock " +
        format_value(maximum(flock_mib), "MiB") + ")";
    ctx.report.add(rss);
    if (cli.has_raw()) {
        Result raw_rss = make_row("command", target, "sqlock run NAME -- true, peak RSS", "MiB");
        raw_rss.sqlock = median(sqlock_mib);
        raw_rss.baseline = median(raw_mib);
        raw_rss.baseline_name = raw_name;
        ctx.report.add(raw_rss);
    }
}

}  // namespace sqlock_bench
