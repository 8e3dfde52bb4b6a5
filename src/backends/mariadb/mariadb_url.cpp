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

// One entry of the host list: host, host:port, [IPv6] or [IPv6]:port.
// `which` names it in messages when there are several ("host 2 of 3 ").
MariaHost parse_host_port(const DatabaseUrl& url, const std::string& hostport,
                          const std::string& which) {
    MariaHost out;
    const std::string who = which.empty() ? std::string("the host ") : which;
    std::string port;
    const char* forbidden = "@/?#[]:";
    if (!hostport.empty() && hostport[0] == '[') {
        // [IPv6]:port
        std::size_t close = hostport.find(']');
        if (close == std::string::npos) bad(url, who + "has an unterminated '['");
        out.host = hostport.substr(1, close - 1);
        std::string rest = hostport.substr(close + 1);
        if (!rest.empty()) {
            if (rest[0] != ':') bad(url, who + "has unexpected text after ']'");
            port = rest.substr(1);
        }
        forbidden = "@/?#[]";
    } else {
        std::size_t colon = hostport.find(':');
        out.host = hostport.substr(0, colon);
        if (colon != std::string::npos) port = hostport.substr(colon + 1);
    }
    if (out.host.find_first_of(forbidden) != std::string::npos)
        bad(url, "malformed " + (which.empty() ? std::string("host ") : which) + "'" +
                     text::printable(out.host, 64) + "'");
    if (port.empty()) return out;
    char* end = nullptr;
    long n = std::strtol(port.c_str(), &end, 10);
    if (*end || n < 1 || n > 65535 || port[0] == '+' || port[0] == '-' || port[0] == ' ')
        bad(url, (which.empty() ? std::string("the port") : which + "has a port that") +
                     " must be a number from 1 to 65535, not '" + text::printable(port, 16) + "'");
    out.port = static_cast<unsigned>(n);
    return out;
}

// "h1:p1,h2:p2,[::1]:p3": the entries, split at the commas outside brackets.
std::vector<std::string> split_hosts(const std::string& text) {
    std::vector<std::string> entries(1);
    bool bracket = false;
    for (char c : text) {
        if (c == '[') bracket = true;
        if (c == ']') bracket = false;
        if (c == ',' && !bracket)
            entries.emplace_back();
        else
            entries.back() += c;
    }
    return entries;
}

void parse_hosts(const DatabaseUrl& url, MariaUrl& out, const std::string& text) {
    const std::vector<std::string> entries = split_hosts(text);
    if (entries.size() > max_hosts)
        bad(url, "lists " + std::to_string(entries.size()) + " hosts; at most " +
                     std::to_string(max_hosts) + " are allowed");
    for (std::size_t i = 0; i < entries.size(); ++i) {
        const std::string which = entries.size() == 1 ? std::string()
                                                      : "host " + std::to_string(i + 1) + " of " +
                                                            std::to_string(entries.size()) + " ";
        if (entries.size() > 1 && entries[i].empty())
            bad(url, which + "is empty (write h1,h2,h3 with no empty entry)");
        out.hosts.push_back(parse_host_port(url, entries[i], which));
    }
}

}  // namespace

std::string MariaHost::label() const {
    const std::string shown = host.empty()                          ? std::string("localhost")
                              : host.find(':') != std::string::npos ? "[" + host + "]"
                                                                    : host;
    return text::printable(shown, 64) + (port ? ":" + std::to_string(port) : std::string());
}

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
    parse_hosts(url, out, rest.substr(0, slash));
    if (slash != std::string::npos) out.database = text::percent_decode(rest.substr(slash + 1));
    if (out.database.empty()) bad(url, "names no database; expected mariadb://user@host/database");
    if (out.database.find('/') != std::string::npos) bad(url, "the database name contains '/'");
    for (const std::string* part : {&out.user, &out.password, &out.database})
        if (part->find('\0') != std::string::npos) bad(url, "contains a NUL byte");
    for (const MariaHost& h : out.hosts)
        if (h.host.find('\0') != std::string::npos) bad(url, "contains a NUL byte");
    if (!query.empty()) apply_query(url, out, query);
    if (out.hosts.size() > 1 && !out.socket.empty())
        bad(url, "socket= names one server; a host list cannot be used with it");
    return out;
}

}  // namespace sqlock::detail::mariadb
