#include "cli_runs.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <stdexcept>

#include "bench_backend.hpp"

namespace sqlock_bench {

CliRuns::CliRuns(const Options& options, const std::string& scratch_dir) {
    const std::string state = scratch_dir + "/state";
    ::mkdir(state.c_str(), 0700);
    env_ = environment_with({"SQLOCK_DB", "XDG_STATE_HOME"}, {"XDG_STATE_HOME=" + state});
    sqlock_ = {options.sqlock_cli, "run", "bench-command", "--", "true"};
    flock_ = {"flock", "-n", scratch_dir + "/bench-command.flock", "true"};
    true_ = {"true"};
    // The default database's own baseline, where its backend has one.
    for (const BenchBackend& backend : bench_backends())
        if (backend.default_database && backend.hooks && backend.hooks->command_baseline) {
            raw_ = {backend.hooks->command_baseline->program, state + "/sqlock/locks.db",
                    "bench-command-raw", "true"};
            raw_name_ = backend.hooks->command_baseline->name;
        }
    // The first run creates the default database: not part of what is timed.
    sqlock_run();
    flock_run();
}

bool CliRuns::available(const Options& options) {
    return ::access(options.sqlock_cli.c_str(), X_OK) == 0;
}

CommandRun CliRuns::checked(CommandRun run) {
    if (run.exit_code != 0) {
        std::string err = run.stderr_text;
        while (!err.empty() && err.back() == '\n') err.pop_back();
        throw std::runtime_error("command exited with status " + std::to_string(run.exit_code) +
                                 (err.empty() ? "" : ": " + err));
    }
    return run;
}

}  // namespace sqlock_bench
