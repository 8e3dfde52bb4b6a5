// The SQLite URL grammar: sqlite:///absolute/path.db, sqlite:relative.db,
// with query parameters (?busy_timeout=MS).
#pragma once

#include <chrono>
#include <map>
#include <string>

#include "loading/url.hpp"

namespace sqlock::detail {

struct SqliteUrl {
    std::string path;
    std::map<std::string, std::string> params;
    bool is_embedded_default = false;
};

/// Reads the part after "sqlite:". Throws errc::invalid_argument for a URL
/// with a host part, without a file, or with a malformed query.
SqliteUrl parse_sqlite_url(const DatabaseUrl& url);

/// The URL's busy_timeout (milliseconds, 10 s when not given), the only
/// parameter it may have. Throws errc::invalid_argument for a value out of
/// 0..3600000 or an unknown parameter.
std::chrono::milliseconds busy_timeout(const SqliteUrl& url);

}  // namespace sqlock::detail
