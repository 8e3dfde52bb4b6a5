#include "contract/clock_report.hpp"

#include <cmath>
#include <cstdio>

namespace sqlock::detail {
namespace {

std::string fixed(double value, int decimals) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
    return buf;
}

double ms(ClockWindow::wall::time_point p) {
    return std::chrono::duration<double, std::milli>(p.time_since_epoch()).count();
}

}  // namespace

ClockDifference ClockWindow::against(double database_epoch_seconds) const {
    const double db_ms = database_epoch_seconds * 1000.0;
    return {db_ms - (ms(sent_) + ms(answered_)) / 2.0, (ms(answered_) - ms(sent_)) / 2.0};
}

Diagnosis::Fact clock_fact(const ClockDifference& d) {
    return {"clock difference", (d.difference_ms >= 0 ? "+" : "") + fixed(d.difference_ms, 1) +
                                    " ms (database minus this host, +/- " +
                                    fixed(d.uncertainty_ms, 1) + " ms)"};
}

std::string clock_problem(const ClockDifference& d) {
    if (std::fabs(d.difference_ms) <= 2000.0) return "";
    return "this host's clock is " + fixed(std::fabs(d.difference_ms) / 1000.0, 1) + " s " +
           (d.difference_ms > 0 ? "behind" : "ahead of") +
           " the database's: leases are timed by the database, but times this host logs will "
           "not match; check NTP";
}

}  // namespace sqlock::detail
