# Turns the schema files into C++ string constants at build time, so the
# library needs no files at run time and sql/ stays plain SQL.
# Inputs: SQLITE_SQL, POSTGRES_SQL, MARIADB_SQL, OUTPUT.
file(READ "${SQLITE_SQL}" sqlite_sql)
file(READ "${POSTGRES_SQL}" postgres_sql)
file(READ "${MARIADB_SQL}" mariadb_sql)
file(WRITE "${OUTPUT}.tmp"
"// Generated from sql/ by cmake/embed_sql.cmake. Do not edit.
#include \"schema.hpp\"
namespace sqlock::detail {
const char* const sqlite_schema_sql = R\"sqlock_sql(${sqlite_sql})sqlock_sql\";
const char* const postgres_schema_sql = R\"sqlock_sql(${postgres_sql})sqlock_sql\";
const char* const mariadb_schema_sql = R\"sqlock_sql(${mariadb_sql})sqlock_sql\";
}  // namespace sqlock::detail
")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
