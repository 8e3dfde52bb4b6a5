// The names of the tables beside a lock table, by the role they play: short
// spellings of side_table_name() (table_family.hpp), where the whole family
// is not at hand.
#pragma once

#include <string>

#include "contract/table_family.hpp"

namespace sqlock::detail {

/// The run history table of lock table `table` (validated, maybe
/// schema-qualified): "<table>_runs", in the same schema ("ops.locks" ->
/// "ops.locks_runs"), its last part fitted to 63 bytes.
inline std::string runs_table_name(const std::string& table) {
    return side_table_name(table, SideTable::runs);
}

/// The pauses table of lock table `table`: "<table>_pauses".
inline std::string pauses_table_name(const std::string& table) {
    return side_table_name(table, SideTable::pauses);
}

/// The queue of waiters of lock table `table`: "<table>_queue".
inline std::string queue_table_name(const std::string& table) {
    return side_table_name(table, SideTable::queue);
}

/// The leaders' values of lock table `table`: "<table>_leaders".
inline std::string leaders_table_name(const std::string& table) {
    return side_table_name(table, SideTable::leaders);
}

}  // namespace sqlock::detail
