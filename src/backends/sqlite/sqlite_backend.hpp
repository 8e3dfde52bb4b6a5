// The SQLite backend: the embedded default, one file shared by processes.
#pragma once

#include <memory>
#include <string>

#include "contract/backend.hpp"
#include "loading/url.hpp"

namespace sqlock::detail {

/// Creates the SQLite backend for `url` (sqlite_url.hpp) and validated
/// `table`. When the URL is the embedded default, the directory and file are
/// created private (0700/0600).
std::unique_ptr<Backend> make_sqlite_backend(const DatabaseUrl& url, const std::string& table,
                                             duration timeout);

}  // namespace sqlock::detail
