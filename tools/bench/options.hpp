// The command line of sqlock-bench, and how long each measurement runs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench_backend.hpp"

namespace sqlock_bench {

struct Options {
    bool quick = false;
    bool json = false;
    /// The backends' own options (BenchBackend::options): a server's URL,
    /// which holds its password (show only redact_url() of it), and the
    /// like.
    OptionValues backend_options;
    std::string sqlock_cli;             // the `sqlock` binary for the command rows
    std::vector<std::string> sections;  // empty: all
    std::vector<std::string> backends;  // empty: all
};

/// The section names, in the order they run.
const std::vector<std::string>& section_names();

/// Parses argv. Prints the help and exits 0 on --help; throws
/// std::invalid_argument on a bad option.
Options parse_options(int argc, char** argv);

/// Sizes and durations of the measurements: the default run stays under five
/// minutes, --quick under one minute on a small machine.
struct Scale {
    int rounds = 10;              // alternating rounds per comparison
    double round_seconds = 0.3;   // one side of one round, one client
    int parallel_clients = 8;     // processes
    int parallel_rounds = 4;      // alternating rounds, fresh processes each
    double parallel_seconds = 1;  // per side per round
    int contenders = 8;           // processes on one name
    double contention_seconds = 6;
    double contention_hold_ms = 1;  // the holder's work between acquire and release
    double poll_interval_ms = 100;  // the peers' polling interval (baseline)
    std::int64_t big_rows = 1'000'000;
    std::int64_t mid_rows = 10'000;
    std::int64_t small_rows = 10;
    double growth_seconds = 0.4;
    int growth_rounds = 5;
    std::vector<int> capacities{1, 10, 100};
    std::int64_t reaper_rows = 1'000'000;
    double probe_idle_seconds = 2;
    int command_runs = 20;
    int rss_runs = 5;
    int held_locks = 10'000;
};

Scale scale_for(const Options& options);

/// "10^6", "10^5", "12345": a row count as the report's labels write it, a
/// power of ten from 100 up as 10^N.
std::string count_text(std::int64_t n);

}  // namespace sqlock_bench
