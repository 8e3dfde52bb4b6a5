#include "sections.hpp"

#include <utility>

namespace sqlock_bench {

Result make_row(const char* section, const BackendTarget& target, std::string operation,
                std::string unit) {
    Result r;
    r.section = section;
    r.backend = target.name;
    r.operation = std::move(operation);
    r.unit = std::move(unit);
    return r;
}

Result comparison_row(const char* section, const BackendTarget& target, std::string operation,
                      const Comparison& comparison, std::string baseline_name, std::string note) {
    Result row = make_row(section, target, std::move(operation), "cycles/s");
    row.sqlock = comparison.a;
    row.baseline = comparison.b;
    row.baseline_name = std::move(baseline_name);
    row.paired_ratio = comparison.ratio;
    row.goal = Goal::none();
    row.note = std::move(note);
    return row;
}

}  // namespace sqlock_bench
