#include "mariadb_url.hpp"

#include <cstdlib>
#include <map>

#include "sqlock/error.hpp"
#include "text.hpp"

namespace sqlock::detail::mariadb {
namespace {

[[noreturn]] void bad(const DatabaseUrl& url, const std::string& why) {
    throw error(errc::invalid_argument, "MariaDB URL '" + url.redacted + "': " + why);
}

SslMode ssl_mode_named(const DatabaseUrl& url, const std::string& value) {
    static const std::map<std::string, SslMode> modes = {
        {"disabled", SslMode::disabled},
        {"preferred", SslMode::preferred},
        {"required", SslMode::required},
        {"verify-ca", SslMode::verify_ca},
        {"verify-identity", SslMode::verify_identity}};
    auto it = modes.find(value);
    if (it == modes.end())
        bad(url, "unknown ssl-mode '" + text::printable(value, 32) +
                     "' (known: disabled, preferred, required, verify-ca, verify-identity)");
    return it->second;
}

void apply_parameter(const DatabaseUrl& url, MariaUrl& out, const std::string& key,
                     const std::string& value) {
    if (key == "socket")
        out.socket = value;
    else if (key == "ssl-mode")
        out.ssl_mode = ssl_mode_named(url, value);
    else if (key == "ssl-ca")
        out.ssl_ca = value;
    else if (key == "ssl-capath")
        out.ssl_capath = value;
    else if (key == "ssl-cert")
        out.ssl_cert = value;
    else if (key == "ssl-key")
        out.ssl_key = value;
    else
        bad(url, "unknown parameter '" + text::printable(key, 32) +
                     "' (known: socket, ssl-mode, ssl-ca, ssl-capath, ssl-cert, ssl-key)");
}

// The pairs are split by the core's parse_query(); values are percent-decoded
// here, as in the userinfo.
void apply_query(const DatabaseUrl& url, MariaUrl& out, const std::string& query) {
    for (const auto& [key, raw] : parse_query(query, url.redacted)) {
        const std::string value = text::percent_decode(raw);
        if (value.find('\0') != std::string::npos) bad(url, "a parameter contains a NUL byte");
        apply_parameter(url, out, key, value);
    }
}

void parse_host_port(const DatabaseUrl& url, MariaUrl& out, const std::string& hostport) {
    std::string port;
    const char* forbidden = "@/?#[]:";
    if (!hostport.empty() && hostport[0] == '[') {
        // [IPv6]:port
        std::size_t close = hostport.find(']');
        if (close == std::string::npos) bad(url, "unterminated '[' in the host");
        out.host = hostport.substr(1, close - 1);
        std::string rest = hostport.substr(close + 1);
        if (!rest.empty()) {
            if (rest[0] != ':') bad(url, "unexpected text after ']' in the host");
            port = rest.substr(1);
        }
        forbidden = "@/?#[]";
    } else {
        std::size_t colon = hostport.find(':');
        out.host = hostport.substr(0, colon);
        if (colon != std::string::npos) port = hostport.substr(colon + 1);
    }
    if (out.host.find_first_of(forbidden) != std::string::npos)
        bad(url, "malformed host '" + text::printable(out.host, 64) + "'");
    if (port.empty()) return;
    char* end = nullptr;
    long n = std::strtol(port.c_str(), &end, 10);
    if (*end || n < 1 || n > 65535 || port[0] == '+' || port[0] == '-' || port[0] == ' ')
        bad(url,
            "the port must be a number from 1 to 65535, not '" + text::printable(port, 16) + "'");
    out.port = static_cast<unsigned>(n);
}

}  // namespace

MariaUrl parse_mariadb_url(const DatabaseUrl& url) {
    const std::string& text = url.original;
    const std::size_t scheme_end = text.find("://");
    if (scheme_end == std::string::npos)
        bad(url, "expected mariadb://user:password@host:port/database");
    // (A raw '@' is read right: the userinfo ends at the last one.)
    if (text::password_holds_raw(text, "/"))
        bad(url, "the password holds a raw '/': write it as %2F");
    std::string rest = text.substr(scheme_end + 3);
    MariaUrl out;

    // Userinfo first, by the rule redaction uses: up to the last '@' before
    // the first '/'. '?', '#' and ':' may be part of a password, so the
    // query is looked for only after it.
    std::size_t slash = rest.find('/');
    std::size_t at = rest.rfind('@', slash == std::string::npos ? std::string::npos : slash);
    if (at != std::string::npos) {
        const std::string userinfo = rest.substr(0, at);
        std::size_t colon = userinfo.find(':');
        out.user = text::percent_decode(userinfo.substr(0, colon));
        if (colon != std::string::npos) {
            out.password = text::percent_decode(userinfo.substr(colon + 1));
            out.has_password = true;
        }
        rest.erase(0, at + 1);
    }
    std::size_t q = rest.find('?');
    std::string query;
    if (q != std::string::npos) {
        query = rest.substr(q + 1);
        rest.resize(q);
    }
    if (rest.find('#') != std::string::npos) bad(url, "a fragment ('#...') is not allowed");
    slash = rest.find('/');
    parse_host_port(url, out, rest.substr(0, slash));
    if (slash != std::string::npos) out.database = text::percent_decode(rest.substr(slash + 1));
    if (out.database.empty()) bad(url, "names no database; expected mariadb://user@host/database");
    if (out.database.find('/') != std::string::npos) bad(url, "the database name contains '/'");
    for (const std::string* part : {&out.user, &out.password, &out.database, &out.host})
        if (part->find('\0') != std::string::npos) bad(url, "contains a NUL byte");
    if (!query.empty()) apply_query(url, out, query);
    return out;
}

}  // namespace sqlock::detail::mariadb
