# Sources of the PostgreSQL backend (owned by the backend, listed here).
target_sources(sqlock PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/postgres_backend.cpp
  ${CMAKE_CURRENT_LIST_DIR}/postgres_connection.cpp
  ${CMAKE_CURRENT_LIST_DIR}/postgres_error.cpp
  ${CMAKE_CURRENT_LIST_DIR}/postgres_link.cpp
  ${CMAKE_CURRENT_LIST_DIR}/postgres_listener.cpp
  ${CMAKE_CURRENT_LIST_DIR}/postgres_redactor.cpp
  ${CMAKE_CURRENT_LIST_DIR}/postgres_statements.cpp
  ${CMAKE_CURRENT_LIST_DIR}/postgres_target.cpp)
