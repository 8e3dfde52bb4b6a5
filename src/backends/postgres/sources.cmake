# Sources of the PostgreSQL backend (owned by the backend, listed here).
target_sources(sqlock PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/postgres_backend.cpp
  ${CMAKE_CURRENT_LIST_DIR}/postgres_connection.cpp
  ${CMAKE_CURRENT_LIST_DIR}/postgres_doctor.cpp
  ${CMAKE_CURRENT_LIST_DIR}/postgres_conninfo.cpp
  ${CMAKE_CURRENT_LIST_DIR}/postgres_error.cpp
  ${CMAKE_CURRENT_LIST_DIR}/postgres_link.cpp
  ${CMAKE_CURRENT_LIST_DIR}/postgres_listener.cpp
  ${CMAKE_CURRENT_LIST_DIR}/postgres_pooler.cpp
  ${CMAKE_CURRENT_LIST_DIR}/postgres_redactor.cpp
  ${CMAKE_CURRENT_LIST_DIR}/postgres_statements.cpp
  ${CMAKE_CURRENT_LIST_DIR}/postgres_target.cpp
  ${CMAKE_CURRENT_LIST_DIR}/postgres_watchdog.cpp)

# libpq itself as well: PQconninfoParse checks a URL when the Locker is made
# (libpqxx has no wrapper for it, and its .pc file does not pull libpq in).
pkg_check_modules(SQLOCK_LIBPQ REQUIRED IMPORTED_TARGET libpq)
target_link_libraries(sqlock PRIVATE PkgConfig::SQLOCK_LIBPQ)
