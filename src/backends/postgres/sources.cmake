# Sources of the PostgreSQL backend (owned by the backend, listed here).
target_sources(sqlock PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/postgres_backend.cpp)
