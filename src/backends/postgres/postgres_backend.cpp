// Placeholder until the PostgreSQL backend lands.
#include "postgres_backend.hpp"

#include "sqlock/error.hpp"

namespace sqlock::detail {

std::unique_ptr<Backend> make_postgres_backend(const DatabaseUrl& url, const std::string&) {
    throw error(errc::configuration, "PostgreSQL backend not implemented yet: " + url.redacted);
}

}  // namespace sqlock::detail
