// The doctor's report of the tables beside the lock table, written once:
// each backend's doctor learns, for every side table its family makes,
// whether it exists and whether this user may use it, and these functions
// word the facts and the problems the same way on every backend.
#pragma once

#include <string>
#include <vector>

#include "contract/table_family.hpp"
#include "sqlock/diagnosis.hpp"

namespace sqlock::detail {

/// What a doctor found out about one side table.
struct SideTableFacts {
    SideTable side;
    std::string name;  // as given: "ops.locks_runs"
    bool exists = false;
    bool usable = true;  // this user may use it (when it exists)
    /// The privileges it lacks, where the backend's probes name them
    /// ("DELETE"); empty when they only say whether it may be used.
    std::vector<std::string> lacking;
};

/// How a backend words what is common to every side table.
struct SideTableWording {
    /// The fact of a table that exists and may be used ("present; bob may
    /// use it"), and of one that may not.
    std::string usable;
    std::string unusable;
    /// What to do about a missing one, after "run `sqlock init`" ("
    /// (needs CREATE on the schema), then grant ...").
    std::string after_init;
};

/// One fact per side table, "run history table ops.locks_runs": "missing"
/// or the wording's present value, in the family's order.
void report_side_table_facts(const std::vector<SideTableFacts>& tables,
                             const SideTableWording& wording, Diagnosis& out);

/// The problems of the side tables of `lock_table` ("lock table
/// ops.locks"): one per missing table ("... does not exist (lock table
/// ops.locks predates it): <what fails>; run `sqlock init`..."). What this
/// user may not use is a server's (server_report.hpp).
std::vector<std::string> side_table_problems(const std::vector<SideTableFacts>& tables,
                                             const std::string& lock_table,
                                             const SideTableWording& wording);

}  // namespace sqlock::detail
