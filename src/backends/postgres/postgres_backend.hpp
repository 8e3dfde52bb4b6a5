// The PostgreSQL backend: locks shared by many hosts, via libpqxx.
#pragma once

#include <memory>
#include <string>

#include "contract/backend.hpp"
#include "loading/url.hpp"

namespace sqlock::detail {

/// Creates the PostgreSQL backend for `url` (passed to libpq as it is) and
/// `table` (validated; may be schema-qualified); `timeout` bounds every
/// round trip to the server.
std::unique_ptr<Backend> make_postgres_backend(const DatabaseUrl& url, const std::string& table,
                                               duration timeout);

}  // namespace sqlock::detail
