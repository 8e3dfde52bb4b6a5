// Time stamps for the benchmark: CLOCK_MONOTONIC, which every process on the
// machine shares, so a release stamped in one process can be compared with
// the acquisition stamped in another.
#pragma once

#include <time.h>

#include <cstdint>

namespace sqlock_bench {

inline std::int64_t now_ns() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

inline double seconds_since(std::int64_t start_ns) {
    return (now_ns() - start_ns) / 1e9;
}

inline void sleep_ns(std::int64_t ns) {
    timespec ts{static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

constexpr std::int64_t ms_to_ns(double ms) {
    return static_cast<std::int64_t>(ms * 1e6);
}

}  // namespace sqlock_bench
