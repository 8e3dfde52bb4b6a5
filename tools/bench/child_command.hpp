// Running a command as a child process: its wall time and peak memory.
#pragma once

#include <string>
#include <vector>

namespace sqlock_bench {

struct CommandRun {
    int exit_code = 0;        // 128 + signal when killed
    double wall_ms = 0.0;     // forked to reaped, CLOCK_MONOTONIC
    long maxrss_kib = 0;      // its own peak resident set (wait4's ru_maxrss)
    std::string stderr_text;  // the first few KiB of what it wrote to stderr
};

/// Runs argv (looked up in PATH) with `env` as its whole environment,
/// stdin and stdout on /dev/null.
CommandRun run_command(const std::vector<std::string>& argv, const std::vector<std::string>& env);

/// This process's environment without the variables named in `drop`, plus
/// `add` ("NAME=value" entries).
std::vector<std::string> environment_with(const std::vector<std::string>& drop,
                                          const std::vector<std::string>& add);

/// The current resident set size of this process in KiB (VmRSS).
long current_rss_kib();

}  // namespace sqlock_bench
