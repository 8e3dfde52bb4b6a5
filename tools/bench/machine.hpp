// What the figures were measured on: they mean little without it.
#pragma once

#include "report.hpp"

namespace sqlock_bench {

/// Adds CPU, core count, memory, OS, kernel, load and library versions to
/// the report's facts.
void describe_machine(Report& report);

}  // namespace sqlock_bench
