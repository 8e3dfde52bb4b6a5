# The SQLite backend's part of sqlock-bench (cmake/backend_bench.cmake): the
# sqlite3 baseline, and the command rows' raw program, as the command's
# default database is SQLite's.
sqlock_backend_bench(sqlite RESULT_NAME sqlite DEFAULT_DATABASE
                     SOURCES sqlite_bench.cpp
                     PKG_CONFIG "SQLOCK_BENCH_SQLITE3:sqlite3")
if(TARGET sqlock_bench_sqlite)
  # The command rows' raw baseline: a lock row around fork and exec with the
  # sqlite3 C API and nothing else (sqlite_bench_rawrun.cpp).
  add_executable(sqlock_bench_rawrun ${CMAKE_CURRENT_LIST_DIR}/sqlite_bench_rawrun.cpp)
  set_target_properties(sqlock_bench_rawrun PROPERTIES OUTPUT_NAME sqlock-bench-rawrun)
  target_compile_options(sqlock_bench_rawrun PRIVATE -Wall -Wextra -Wpedantic)
  target_link_libraries(sqlock_bench_rawrun PRIVATE PkgConfig::SQLOCK_BENCH_SQLITE3)
  target_link_options(sqlock_bench_rawrun PRIVATE -static-libstdc++ -static-libgcc)
  add_dependencies(sqlock_bench_sqlite sqlock_bench_rawrun)
  target_compile_definitions(sqlock_bench_sqlite PRIVATE
    SQLOCK_BENCH_SQLITE_RAWRUN="$<TARGET_FILE:sqlock_bench_rawrun>")
endif()
