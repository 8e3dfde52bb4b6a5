#include "rates.hpp"

#include <atomic>
#include <cstdint>

#include "clock.hpp"
#include "interrupt.hpp"
#include "shared.hpp"
#include "stats.hpp"
#include "workers.hpp"

namespace sqlock_bench {

double measure_rate(const Cycle& cycle, double seconds) {
    const std::int64_t start = now_ns();
    const std::int64_t end = start + static_cast<std::int64_t>(seconds * 1e9);
    std::int64_t count = 0;
    std::int64_t now = start;
    // Reading CLOCK_MONOTONIC costs tens of nanoseconds (vDSO): negligible
    // against a database round trip, so it is read after every cycle.
    while (now < end) {
        cycle();
        ++count;
        now = now_ns();
    }
    check_interrupted();
    return static_cast<double>(count) / ((now - start) / 1e9);
}

std::vector<std::vector<double>> rotate_rates(const std::vector<Cycle>& alternatives, int rounds,
                                              double seconds) {
    const std::size_t n = alternatives.size();
    // Warm-up: caches, prepared statements, the page cache, lazy connections.
    for (const Cycle& c : alternatives) measure_rate(c, seconds / 4);
    std::vector<std::vector<double>> rates(n);
    for (int r = 0; r < rounds; ++r)
        for (std::size_t k = 0; k < n; ++k) {
            const std::size_t which = (k + static_cast<std::size_t>(r)) % n;
            rates[which].push_back(measure_rate(alternatives[which], seconds));
        }
    return rates;
}

Comparison compare_rates(const Cycle& a, const Cycle& b, int rounds, double seconds) {
    auto rates = rotate_rates({a, b}, rounds, seconds);
    std::vector<double> ratios;
    for (std::size_t r = 0; r < rates[0].size(); ++r) ratios.push_back(rates[0][r] / rates[1][r]);
    return {median(rates[0]), median(rates[1]), median(ratios)};
}

namespace {

struct WorkerCount {
    std::atomic<std::int64_t> cycles{0};
    std::atomic<std::int64_t> elapsed_ns{0};
};

}  // namespace

double rate_in_processes(int workers, double seconds, const CycleFactory& make) {
    Shared<StartLine> line;
    Shared<WorkerCount> counts(static_cast<std::size_t>(workers));
    const auto duration = static_cast<std::int64_t>(seconds * 1e9);
    Workers children(workers, [&](int i) {
        Cycle cycle = make(i);
        cycle();  // warm-up: connect, prepare
        const std::int64_t start = line->arrive_and_wait();
        const std::int64_t end = start + duration;
        std::int64_t n = 0;
        std::int64_t now = now_ns();
        while (now < end) {
            cycle();
            ++n;
            now = now_ns();
        }
        counts[static_cast<std::size_t>(i)].cycles = n;
        counts[static_cast<std::size_t>(i)].elapsed_ns = now - start;
    });
    children.start_together(*line);
    children.join();
    double total = 0.0;
    for (std::size_t i = 0; i < counts.size(); ++i)
        total += static_cast<double>(counts[i].cycles) / (counts[i].elapsed_ns / 1e9);
    return total;
}

}  // namespace sqlock_bench
