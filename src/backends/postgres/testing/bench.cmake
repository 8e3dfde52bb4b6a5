# The PostgreSQL backend's part of sqlock-bench (cmake/backend_bench.cmake):
# the libpq baseline, whose layered rows run the backend's own statements,
# and the pooled rows beside the direct one.
sqlock_backend_bench(postgres RESULT_NAME postgresql
  OPTIONS
    "pg-url|SQLOCK_TEST_PG_URL|PostgreSQL URL (default: $SQLOCK_TEST_PG_URL); without one the PostgreSQL rows are skipped"
    "pg-pooled-url|SQLOCK_TEST_PGBOUNCER_TRANSACTION_URL|the same server through PgBouncer in transaction mode, with pooler=transaction (default: $SQLOCK_TEST_PGBOUNCER_TRANSACTION_URL); adds a pooled row beside the direct one"
    "pg-session-pooled-url|SQLOCK_TEST_PGBOUNCER_SESSION_URL|the same server through PgBouncer in session mode (default: $SQLOCK_TEST_PGBOUNCER_SESSION_URL); adds a row of the pooler's hop alone, with prepared statements"
  SOURCES postgres_bench.cpp postgres_bench_layers.cpp
  BACKEND_SOURCES postgres_statements.cpp postgres_target.cpp postgres_conninfo.cpp
                  postgres_pooler.cpp postgres_redactor.cpp
  PKG_CONFIG "SQLOCK_BENCH_LIBPQ:libpq")
