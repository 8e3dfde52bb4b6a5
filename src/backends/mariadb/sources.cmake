# Sources of the MariaDB/MySQL backend (owned by the backend, listed here).
target_sources(sqlock PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/mariadb_backend.cpp
  ${CMAKE_CURRENT_LIST_DIR}/mariadb_connection.cpp
  ${CMAKE_CURRENT_LIST_DIR}/mariadb_doctor.cpp
  ${CMAKE_CURRENT_LIST_DIR}/mariadb_error.cpp
  ${CMAKE_CURRENT_LIST_DIR}/mariadb_link.cpp
  ${CMAKE_CURRENT_LIST_DIR}/mariadb_statements.cpp
  ${CMAKE_CURRENT_LIST_DIR}/mariadb_target.cpp
  ${CMAKE_CURRENT_LIST_DIR}/mariadb_url.cpp)

pkg_check_modules(SQLOCK_LIBMARIADB REQUIRED IMPORTED_TARGET libmariadb)
target_link_libraries(sqlock PRIVATE PkgConfig::SQLOCK_LIBMARIADB)
