// Choosing a backend from a parsed URL.
#pragma once

#include <memory>
#include <string>

#include "contract/backend.hpp"
#include "loading/url.hpp"

namespace sqlock::detail {

/// The backend for `url`'s scheme. Throws errc::configuration when that
/// backend was not compiled in, errc::invalid_argument for a bad table name.
/// `timeout` bounds each round trip to a database server
/// (LockerOptions::db_timeout).
std::unique_ptr<Backend> make_backend(const DatabaseUrl& url, const std::string& table,
                                      duration timeout);

}  // namespace sqlock::detail
