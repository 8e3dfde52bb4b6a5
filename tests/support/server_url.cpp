#include "server_url.hpp"

#include <algorithm>
#include <stdexcept>

namespace sqlock_test {

ServerUrl::ServerUrl(const std::string& url) {
    const auto scheme_end = url.find("://");
    if (scheme_end == std::string::npos) throw std::invalid_argument("not a server URL: no ://");
    scheme = url.substr(0, scheme_end);
    const auto start = scheme_end + 3;
    // The authority ends at the path; the userinfo at its last '@' (a '@' in
    // a password is percent-encoded, one in the path is not the userinfo's).
    const auto end = std::min(url.find_first_of("/?#", start), url.size());
    const auto at = url.rfind('@', end == 0 ? 0 : end - 1);
    auto host_start = start;
    if (at != std::string::npos && at >= start) {
        const std::string userinfo = url.substr(start, at - start);
        const auto colon = userinfo.find(':');
        user = userinfo.substr(0, colon);
        if (colon != std::string::npos) password = userinfo.substr(colon + 1);
        host_start = at + 1;
    }
    const std::string hostport = url.substr(host_start, end - host_start);
    const auto bracket = hostport.find(']');
    const auto colon = hostport.find(':', bracket == std::string::npos ? 0 : bracket);
    host = hostport.substr(0, colon);
    if (colon != std::string::npos) port = hostport.substr(colon + 1);
    path = url.substr(end);
}

std::string ServerUrl::str() const {
    std::string url = scheme + "://";
    if (!user.empty() || !password.empty())
        url += user + (password.empty() ? "" : ":" + password) + "@";
    url += host;
    if (!port.empty()) url += ":" + port;
    return url + path;
}

std::string password_of(const std::string& url) {
    return url.find("://") == std::string::npos ? "" : ServerUrl(url).password;
}

int port_of(const std::string& url) {
    return std::stoi(ServerUrl(url).port);
}

std::string with_user(const std::string& url, const std::string& user) {
    ServerUrl parts(url);
    parts.user = user;
    return parts.str();
}

std::string with_password(const std::string& url, const std::string& password) {
    ServerUrl parts(url);
    parts.password = password;
    return parts.str();
}

std::string with_host(const std::string& url, const std::string& host) {
    ServerUrl parts(url);
    parts.host = host;
    return parts.str();
}

std::string with_port(const std::string& url, int port) {
    ServerUrl parts(url);
    parts.port = std::to_string(port);
    return parts.str();
}

std::string with_param(const std::string& url, const std::string& key, const std::string& value) {
    return url + (url.find('?') == std::string::npos ? "?" : "&") + key + "=" + value;
}

}  // namespace sqlock_test
