#include "contract/side_table_report.hpp"

namespace sqlock::detail {

void report_side_table_facts(const std::vector<SideTableFacts>& tables,
                             const SideTableWording& wording, Diagnosis& out) {
    for (const SideTableFacts& t : tables)
        out.facts.push_back(
            {std::string(kind_of(t.side).title) + " " + t.name, !t.exists  ? "missing"
                                                                : t.usable ? wording.usable
                                                                           : wording.unusable});
}

std::vector<std::string> side_table_problems(const std::vector<SideTableFacts>& tables,
                                             const std::string& lock_table,
                                             const SideTableWording& wording) {
    std::vector<std::string> problems;
    for (const SideTableFacts& t : tables) {
        const SideTableKind& kind = kind_of(t.side);
        if (!t.exists)
            problems.push_back(std::string(kind.title) + " " + t.name + " does not exist (" +
                               lock_table + " predates it): " + kind.without +
                               "; run `sqlock init`" + wording.after_init);
    }
    return problems;
}

}  // namespace sqlock::detail
