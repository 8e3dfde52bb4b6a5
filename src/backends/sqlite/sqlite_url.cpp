#include "sqlite_url.hpp"

#include <cstdlib>

#include "base/validate.hpp"
#include "sqlock/error.hpp"

namespace sqlock::detail {

SqliteUrl parse_sqlite_url(const DatabaseUrl& url) {
    SqliteUrl out;
    out.is_embedded_default = url.is_embedded_default;
    std::string rest = url.original.substr(url.scheme.size() + 1);  // after "sqlite:"
    std::size_t q = rest.find('?');
    if (q != std::string::npos) {
        out.params = parse_query(rest.substr(q + 1), url.redacted);
        rest = rest.substr(0, q);
    }
    if (rest.compare(0, 2, "//") == 0) {
        // sqlite:///abs/path — the authority must be empty.
        rest = rest.substr(2);
        if (rest.empty() || rest[0] != '/')
            throw error(errc::invalid_argument,
                        "SQLite URL '" + url.redacted +
                            "' has a host part; use sqlite:///absolute/path.db "
                            "or sqlite:relative/path.db");
    }
    if (rest.empty())
        throw error(errc::invalid_argument,
                    "SQLite URL '" + url.redacted + "' names no file; use sqlite:///path.db");
    if (rest.find('\0') != std::string::npos)
        throw error(errc::invalid_argument, "SQLite URL contains a NUL byte");
    out.path = rest;
    return out;
}

std::chrono::milliseconds busy_timeout(const SqliteUrl& url) {
    long busy_ms = 10000;
    auto it = url.params.find("busy_timeout");
    if (it != url.params.end()) {
        char* end = nullptr;
        busy_ms = std::strtol(it->second.c_str(), &end, 10);
        if (it->second.empty() || *end || busy_ms < 0 || busy_ms > 3600000) {
            throw error(errc::invalid_argument,
                        "busy_timeout must be milliseconds between 0 and 3600000");
        }
    }
    for (const auto& [key, value] : url.params) {
        if (key != "busy_timeout") {
            throw error(errc::invalid_argument, "unknown SQLite URL parameter '" + printable(key) +
                                                    "' (known: busy_timeout)");
        }
    }
    return std::chrono::milliseconds(busy_ms);
}

}  // namespace sqlock::detail
