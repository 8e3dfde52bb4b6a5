# The MariaDB backend's part of sqlock-bench (cmake/backend_bench.cmake): the
# MariaDB C connector's baseline, whose layered rows send the backend's own
# batches.
sqlock_backend_bench(mariadb RESULT_NAME mariadb
  OPTIONS
    "mariadb-url|SQLOCK_TEST_MARIADB_URL|MariaDB/MySQL URL, mariadb://... (default: $SQLOCK_TEST_MARIADB_URL); without one the MariaDB rows are skipped"
  SOURCES mariadb_bench.cpp mariadb_bench_layers.cpp
  BACKEND_SOURCES mariadb_statements.cpp mariadb_target.cpp mariadb_url.cpp
  PKG_CONFIG "SQLOCK_BENCH_LIBMARIADB:libmariadb")
