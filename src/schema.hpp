// The schema files from sql/, compiled in (see cmake/embed_sql.cmake).
#pragma once

#include <string>

namespace sqlock::detail {

extern const char* const sqlite_schema_sql;
extern const char* const postgres_schema_sql;
extern const char* const mariadb_schema_sql;

/// Replaces every "${key}" in `sql` with `value`.
std::string substitute(std::string sql, const std::string& key, const std::string& value);

}  // namespace sqlock::detail
