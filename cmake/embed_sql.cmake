# Turns a backend's schema file into a C++ string constant at build time, so
# the library needs no files at run time and sql/ stays plain SQL.
# Inputs: NAME (the backend), SQL (its schema.sql), OUTPUT (the .cpp to write),
# which defines sqlock::detail::<NAME>_schema_sql.
file(READ "${SQL}" sql)
file(WRITE "${OUTPUT}.tmp"
"// Generated from sql/${NAME}/schema.sql by cmake/embed_sql.cmake. Do not edit.
namespace sqlock::detail {
extern const char* const ${NAME}_schema_sql;
const char* const ${NAME}_schema_sql = R\"sqlock_sql(${sql})sqlock_sql\";
}  // namespace sqlock::detail
")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
