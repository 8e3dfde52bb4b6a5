#include "sections.hpp"

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

}  // namespace sqlock_bench
