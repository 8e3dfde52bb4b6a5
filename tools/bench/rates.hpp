// Throughput measurement that holds on a noisy machine: alternatives are
// measured in alternating (rotating) short rounds, so a burst of load from
// another process hits both sides, and ratios are taken per round.
#pragma once

#include <functional>
#include <vector>

namespace sqlock_bench {

/// One operation to repeat (for example an acquire and a release).
using Cycle = std::function<void()>;

/// Runs `cycle` repeatedly for `seconds` of wall time; returns cycles/s.
double measure_rate(const Cycle& cycle, double seconds);

/// Rates of several alternatives: `rounds` rounds, each running every
/// alternative for `seconds`, starting with a different one each round.
/// Returns rates[alternative][round].
std::vector<std::vector<double>> rotate_rates(const std::vector<Cycle>& alternatives, int rounds,
                                              double seconds);

/// Two alternatives compared: median rates and the median per-round ratio.
struct Comparison {
    double a = 0.0;      // median cycles/s of the first
    double b = 0.0;      // median cycles/s of the second
    double ratio = 0.0;  // median over rounds of a/b
};

/// Measures `a` against `b` in `rounds` alternating rounds after a warm-up.
Comparison compare_rates(const Cycle& a, const Cycle& b, int rounds, double seconds);

/// Makes a worker's cycle; runs in the worker, so it may open connections.
using CycleFactory = std::function<Cycle(int worker)>;

/// Total cycles/s of `workers` forked processes running make(i)'s cycle for
/// `seconds`, all started together after each did one warm-up cycle.
double rate_in_processes(int workers, double seconds, const CycleFactory& make);

}  // namespace sqlock_bench
