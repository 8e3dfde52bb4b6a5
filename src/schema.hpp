// Filling in the schema files of sql/ (each backend's is compiled into it as
// <backend>_schema_sql: cmake/embed_sql.cmake).
#pragma once

#include <string>

namespace sqlock::detail {

/// Replaces every "${key}" in `sql` with `value`.
std::string substitute(std::string sql, const std::string& key, const std::string& value);

}  // namespace sqlock::detail
