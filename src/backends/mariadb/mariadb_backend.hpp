// The MariaDB/MySQL backend: locks shared by many hosts, via the MariaDB C
// connector (libmariadb).
#pragma once

#include <memory>
#include <string>

#include "contract/backend.hpp"
#include "loading/url.hpp"
#include "sqlock/duration.hpp"

namespace sqlock::detail {

/// Creates the MariaDB backend for `url` (mariadb:// or mysql://, read by
/// mariadb_url.hpp; throws errc::invalid_argument for one it cannot read) and
/// `table` (validated; may be database-qualified). `timeout` bounds every
/// round trip to the server.
std::unique_ptr<Backend> make_mariadb_backend(const DatabaseUrl& url, const std::string& table,
                                              duration timeout);

}  // namespace sqlock::detail
