#include "postgres_conninfo.hpp"

#include <libpq-fe.h>

#include <algorithm>
#include <map>
#include <memory>

#include "postgres_redactor.hpp"
#include "sqlock/error.hpp"

namespace sqlock::detail::postgres {

namespace {

using options_ptr = std::unique_ptr<PQconninfoOption, void (*)(PQconninfoOption*)>;

options_ptr parse_options(const DatabaseUrl& url) {
    char* raw_error = nullptr;
    options_ptr options(PQconninfoParse(url.original.c_str(), &raw_error), PQconninfoFree);
    if (!options) {
        std::string message = raw_error ? raw_error : "out of memory";
        if (raw_error) PQfreemem(raw_error);
        // libpq quotes the offending part, which may be the password itself.
        Redactor redact(url, {});
        throw error(errc::invalid_argument,
                    redact("malformed PostgreSQL URL '" + url.redacted + "': " + message));
    }
    return options;
}

// A value quoted for a keyword=value connection string.
std::string quoted(const std::string& value) {
    std::string out = "'";
    for (char c : value) {
        if (c == '\\' || c == '\'') out += '\\';
        out += c;
    }
    return out + "'";
}

}  // namespace

ConnInfo parse_conninfo(const DatabaseUrl& url) {
    options_ptr options = parse_options(url);
    ConnInfo info;
    for (const PQconninfoOption* o = options.get(); o->keyword; ++o)
        if (o->val && std::string(o->keyword) == "password") info.password = o->val;
    return info;
}

std::string bounded_conninfo(const DatabaseUrl& url, duration timeout) {
    options_ptr options = parse_options(url);
    const long long ms = std::max<long long>(timeout.count(), 1);
    const long long seconds = std::max<long long>((ms + 999) / 1000, 1);
    // Keepalives: first probe after half the timeout, then one a second,
    // three unanswered ones break the connection.
    std::map<std::string, std::string> defaults = {
        {"connect_timeout", std::to_string(std::max<long long>(seconds, 2))},
        {"keepalives", "1"},
        {"keepalives_idle", std::to_string(std::max<long long>(seconds / 2, 1))},
        {"keepalives_interval", "1"},
        {"keepalives_count", "3"},
        {"tcp_user_timeout", std::to_string(ms)},
    };
    std::string out;
    for (const PQconninfoOption* o = options.get(); o->keyword; ++o) {
        if (!o->val) continue;
        defaults.erase(o->keyword);
        out += std::string(o->keyword) + "=" + quoted(o->val) + " ";
    }
    for (const auto& [key, value] : defaults) out += key + "=" + value + " ";
    if (!out.empty()) out.pop_back();
    return out;
}

}  // namespace sqlock::detail::postgres
