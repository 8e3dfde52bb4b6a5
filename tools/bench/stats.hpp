// Order statistics over a run's samples.
#pragma once

#include <vector>

namespace sqlock_bench {

/// The median (mean of the middle two for an even count); 0 when empty.
double median(std::vector<double> values);

/// Nearest-rank percentile, p in [0, 100]; 0 when empty.
double percentile(std::vector<double> values, double p);

/// The largest value; 0 when empty.
double maximum(const std::vector<double>& values);

}  // namespace sqlock_bench
