#include "postgres_conninfo.hpp"

#include <libpq-fe.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <vector>

#include "base/host_resolution.hpp"
#include "postgres_redactor.hpp"
#include "sqlock/error.hpp"
#include "text.hpp"

namespace sqlock::detail::postgres {

namespace {

using options_ptr = std::unique_ptr<PQconninfoOption, void (*)(PQconninfoOption*)>;

// "a,b,,c" as libpq splits a host, hostaddr or port list.
std::vector<std::string> split_list(const std::string& text) {
    std::vector<std::string> out(1);
    for (char c : text) {
        if (c == ',')
            out.emplace_back();
        else
            out.back() += c;
    }
    return out;
}

std::string join_list(const std::vector<std::string>& items) {
    std::string out;
    for (std::size_t i = 0; i < items.size(); ++i) out += (i ? "," : "") + items[i];
    return out;
}

// libpq's parse_int_param: strtol's whole number that fits an int, blanks
// after it allowed; nothing for anything else.
std::optional<long> int_value(const std::string& text) {
    if (text.empty()) return std::nullopt;
    errno = 0;
    char* end = nullptr;
    const long value = std::strtol(text.c_str(), &end, 10);
    if (end == text.c_str() || errno == ERANGE || value < INT_MIN || value > INT_MAX)
        return std::nullopt;
    while (*end == ' ' || (*end >= '\t' && *end <= '\r')) ++end;
    if (*end != '\0') return std::nullopt;
    return value;
}

// What libpq would refuse only when it connects, after sqlock has counted
// that as "the server cannot be reached" (exit 69, try again later): a value
// that is not one of its keyword's, or not a number. Only what libpq 15
// always reads: the keywords it checks before its first attempt, and a
// single port (used for every host; in a list, a host's port is read only
// if that host is tried). Anything else is left for libpq to judge.
// `redact` runs before a value is shown.
template <typename Redact>
std::string wrong_value(const PQconninfoOption* options, const Redact& redact) {
    static const std::map<std::string, std::vector<std::string>> choices = {
        {"sslmode", {"disable", "allow", "prefer", "require", "verify-ca", "verify-full"}},
        {"gssencmode", {"disable", "prefer", "require"}},
        {"channel_binding", {"disable", "prefer", "require"}},
        {"target_session_attrs",
         {"any", "read-write", "read-only", "primary", "standby", "prefer-standby"}},
    };
    for (const PQconninfoOption* o = options; o->keyword; ++o) {
        if (!o->val) continue;
        const std::string key = o->keyword, value = o->val;
        const std::string shown = "'" + text::printable(redact(value), 64) + "'";
        auto it = choices.find(key);
        if (it != choices.end() &&
            std::find(it->second.begin(), it->second.end(), value) == it->second.end()) {
            std::string known;
            for (const std::string& c : it->second) known += (known.empty() ? "" : ", ") + c;
            return "invalid " + key + " " + shown + " (one of " + known + ")";
        }
        if (key == "connect_timeout" && !int_value(value))
            return "invalid " + key + " " + shown + " (a whole number)";
        if (key == "port" && value.find(',') == std::string::npos && !value.empty()) {
            const auto port = int_value(value);
            if (!port || *port < 1 || *port > 65535)
                return "invalid port " + shown + " (1 to 65535)";
        }
    }
    return "";
}

// libpq ends a URL's user name and password at its first '@' (before any
// '/'), so a raw '@' in either leaves the rest in the host and port, and a
// raw '/' in the password ends the authority early: either way part of the
// password would be read as a host, port or database, which error messages
// show. Refused, before libpq sees it.
void refuse_unescaped_userinfo(const DatabaseUrl& url) {
    const std::string& s = url.original;
    if (text::password_holds_raw(s, "/"))
        throw error(errc::invalid_argument, "malformed PostgreSQL URL '" + url.redacted +
                                                "': the password holds a raw '/': write it as %2F");
    for (const std::string prefix : {"postgresql://", "postgres://"}) {
        if (s.compare(0, prefix.size(), prefix) != 0) continue;
        const std::size_t at = s.find_first_of("@/", prefix.size());
        if (at == std::string::npos || s[at] != '@') return;
        const std::size_t host_end = s.find_first_of("/?", at + 1);
        if (s.find('@', at + 1) < host_end)
            throw error(errc::invalid_argument,
                        "malformed PostgreSQL URL '" + url.redacted +
                            "': more than one '@' before the host; write an '@' in the user "
                            "name or password as %40");
        return;
    }
}

options_ptr parse_options(const DatabaseUrl& url) {
    refuse_unescaped_userinfo(url);
    char* raw_error = nullptr;
    options_ptr options(PQconninfoParse(url.original.c_str(), &raw_error), PQconninfoFree);
    // libpq quotes the offending part, which may be the password itself.
    Redactor redact(url, {});
    if (!options) {
        std::string message = raw_error ? raw_error : "out of memory";
        if (raw_error) PQfreemem(raw_error);
        throw error(errc::invalid_argument,
                    redact("malformed PostgreSQL URL '" + url.redacted + "': " + message));
    }
    const std::string wrong = wrong_value(options.get(), redact);
    if (!wrong.empty())
        throw error(errc::invalid_argument,
                    redact("malformed PostgreSQL URL '" + url.redacted + "': " + wrong));
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

// The value `keyword` has in `options` ("" when it has none).
std::string option_value(const PQconninfoOption* options, const char* keyword) {
    for (const PQconninfoOption* o = options; o->keyword; ++o)
        if (o->val && std::string(o->keyword) == keyword) return o->val;
    return "";
}

// `options` as a keyword=value string, with `replaced` in place of (or in
// addition to) their own values.
std::string write_conninfo(const PQconninfoOption* options,
                           const std::map<std::string, std::string>& replaced) {
    std::string out;
    for (const PQconninfoOption* o = options; o->keyword; ++o) {
        auto it = replaced.find(o->keyword);
        if (it != replaced.end())
            out += it->first + "=" + quoted(it->second) + " ";
        else if (o->val)
            out += std::string(o->keyword) + "=" + quoted(o->val) + " ";
    }
    if (!out.empty()) out.pop_back();
    return out;
}

// A host entry libpq does not look up: empty (the default socket), a socket
// directory, or an abstract socket ("@name").
bool is_socket(const std::string& host) {
    return host.empty() || host[0] == '/' || host[0] == '@';
}

}  // namespace

ConnInfo parse_conninfo(const DatabaseUrl& url) {
    options_ptr options = parse_options(url);
    ConnInfo info;
    info.password = option_value(options.get(), "password");
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
    for (const PQconninfoOption* o = options.get(); o->keyword; ++o)
        if (o->val) defaults.erase(o->keyword);  // the URL's own value wins
    return write_conninfo(options.get(), defaults);
}

namespace {

// The hosts of a connection string as libpq will use them, when sqlock is to
// look their names up (see resolved_conninfo for when it is not).
struct HostList {
    options_ptr options{nullptr, PQconninfoFree};
    std::vector<std::string> hosts;
    std::vector<std::string> ports;  // one per host, or one or none for all
    bool port_each = false;
    LookupPlan plan;
};

std::optional<HostList> host_list(const std::string& conninfo) {
    HostList list;
    list.options.reset(PQconninfoParse(conninfo.c_str(), nullptr));
    if (!list.options) return std::nullopt;  // bounded_conninfo's own output: cannot happen
    auto value = [&](const char* keyword) { return option_value(list.options.get(), keyword); };
    auto env = [](const char* name) {
        const char* v = std::getenv(name);
        return std::string(v ? v : "");
    };
    list.hosts = split_list(value("host"));
    list.ports = split_list(value("port").empty() ? env("PGPORT") : value("port"));
    // A list of ports must match the hosts (else libpq says so); one port,
    // or none, serves every entry. Written out when there is a list, so a
    // list from PGPORT applies to the entries it was meant for.
    list.port_each = list.ports.size() > 1;
    if (value("host").empty() || !value("hostaddr").empty() || !value("service").empty() ||
        !env("PGSERVICE").empty() || !env("PGHOSTADDR").empty() ||
        (list.port_each && list.ports.size() != list.hosts.size()))
        return std::nullopt;
    bool any_name = false;
    for (const std::string& h : list.hosts) {
        list.plan.hosts.push_back(is_socket(h) ? "" : h);
        any_name = any_name || (!is_socket(h) && !is_numeric_address(h));
    }
    if (!any_name) return std::nullopt;
    // Looking for a primary (or a standby), libpq passes over hosts it
    // reaches: any of them may be the one it needs.
    const std::string attrs = value("target_session_attrs").empty() ? env("PGTARGETSESSIONATTRS")
                                                                    : value("target_session_attrs");
    list.plan.wait_for_all = !attrs.empty() && attrs != "any";
    return list;
}

}  // namespace

LookupPlan lookup_plan(const std::string& conninfo) {
    std::optional<HostList> list = host_list(conninfo);
    return list ? list->plan : LookupPlan{};
}

std::vector<HostEntry> each_host(const std::string& conninfo) {
    options_ptr options(PQconninfoParse(conninfo.c_str(), nullptr), PQconninfoFree);
    if (!options) return {};
    auto value = [&](const char* keyword) { return option_value(options.get(), keyword); };
    const std::vector<std::string> hosts = split_list(value("host"));
    if (hosts.size() < 2) return {};
    const std::vector<std::string> addrs = split_list(value("hostaddr"));
    const std::vector<std::string> ports = split_list(value("port"));
    std::vector<HostEntry> out;
    for (std::size_t i = 0; i < hosts.size(); ++i) {
        // A list of ports names each host's; one port (or none) serves all.
        const std::string port = ports.size() == hosts.size() ? ports[i] : ports.front();
        std::map<std::string, std::string> replaced = {
            {"host", hosts[i]}, {"port", port}, {"target_session_attrs", "any"}};
        if (addrs.size() == hosts.size()) replaced["hostaddr"] = addrs[i];
        out.push_back(
            {hosts[i] + (port.empty() ? "" : ":" + port), write_conninfo(options.get(), replaced)});
    }
    return out;
}

ResolvedConnInfo resolved_conninfo(const std::string& conninfo, duration timeout) {
    std::optional<HostList> list = host_list(conninfo);
    if (!list) return {conninfo, ""};
    const std::vector<std::string>& hosts = list->hosts;
    const std::vector<std::string>& ports = list->ports;
    const bool port_each = list->port_each;
    const std::vector<Resolution> found =
        resolve_in_order(list->plan.hosts, timeout, list->plan.wait_for_all);

    std::vector<std::string> host_out, addr_out, port_out;
    std::string skipped;
    for (std::size_t i = 0; i < hosts.size(); ++i) {
        const std::string port = port_each ? ports[i] : std::string();
        auto add = [&](const std::string& address) {
            host_out.push_back(hosts[i]);
            addr_out.push_back(address);  // "": libpq's own way (no lookup, or its own)
            port_out.push_back(port);
        };
        const Resolution& r = found[i];
        // A socket ("" in the plan), or a name left to libpq's own lookup.
        if (list->plan.hosts[i].empty() || !r.answered) add("");
        for (const std::string& address : r.addresses) add(address);
        if (!r.problem.empty()) skipped += (skipped.empty() ? "" : "; ") + r.problem;
    }
    if (host_out.empty()) throw std::runtime_error(skipped);

    std::map<std::string, std::string> replaced = {{"host", join_list(host_out)},
                                                   {"hostaddr", join_list(addr_out)}};
    if (port_each) replaced["port"] = join_list(port_out);
    return {write_conninfo(list->options.get(), replaced), skipped};
}

}  // namespace sqlock::detail::postgres
