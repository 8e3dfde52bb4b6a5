#include "postgres_pooler.hpp"

#include "loading/url.hpp"
#include "sqlock/error.hpp"
#include "text.hpp"

namespace sqlock::detail::postgres {
namespace {

// Where the query of a postgresql:// URL starts (its '?'), or npos. The
// userinfo may contain '?' (a password), so search after its '@', the way
// password_ranges() finds the userinfo.
std::size_t query_start(const std::string& url) {
    std::size_t scheme_end = url.find("://");
    if (scheme_end == std::string::npos) return std::string::npos;
    std::size_t from = scheme_end + 3;
    std::size_t slash = url.find('/', from);
    std::size_t at = url.rfind('@', slash == std::string::npos ? std::string::npos : slash);
    if (at != std::string::npos && at >= from) from = at + 1;
    return url.find('?', from);
}

PoolMode parse_mode(const std::string& value, const std::string& shown) {
    if (value == "none") return PoolMode::none;
    if (value == "session") return PoolMode::session;
    if (value == "transaction") return PoolMode::transaction;
    if (value == "statement") return PoolMode::statement;
    throw error(errc::invalid_argument, "unknown pooler '" + text::printable(value) +
                                            "' in database URL '" + shown +
                                            "'; expected none, session, transaction or statement");
}

}  // namespace

PoolerSetting split_pooler(const std::string& url, const std::string& shown) {
    PoolerSetting out;
    out.libpq_url = url;
    const std::size_t q = query_start(url);
    if (q == std::string::npos) return out;
    std::string kept;
    bool seen = false;
    std::size_t start = q + 1;
    while (start <= url.size()) {
        std::size_t end = url.find('&', start);
        if (end == std::string::npos) end = url.size();
        const std::string pair = url.substr(start, end - start);
        if (pair.compare(0, 7, "pooler=") == 0) {
            if (seen)
                throw error(errc::invalid_argument,
                            "the pooler parameter is given twice in database URL '" + shown + "'");
            seen = true;
            out.mode = parse_mode(pair.substr(7), shown);
        } else if (!pair.empty()) {
            kept += (kept.empty() ? "" : "&") + pair;
        }
        start = end + 1;
    }
    out.libpq_url = url.substr(0, q) + (kept.empty() ? "" : "?" + kept);
    return out;
}

const char* pool_mode_name(PoolMode mode) noexcept {
    switch (mode) {
        case PoolMode::none:
            return "none";
        case PoolMode::session:
            return "session";
        case PoolMode::transaction:
            return "transaction";
        case PoolMode::statement:
            return "statement";
    }
    return "none";
}

}  // namespace sqlock::detail::postgres
