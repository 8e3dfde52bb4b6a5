// Server URLs in tests: taking the test server's URL apart to connect as
// another account, with another password, to another host or port, and
// finding its password (which must never appear in any output).
#pragma once

#include <string>

namespace sqlock_test {

/// ServerUrl
///
/// A server URL taken apart: "scheme://user:password@host:port/path", where
/// `path` is everything after the port (the database and any parameters,
/// "/sqlock_test?x=y"). str() puts it back together; a part left empty is
/// left out (with its ':' or '@'). The password is kept as written
/// (percent-encoded). A host in brackets ("[::1]") keeps its brackets.
/// A password must have its '/', '?' and '#' percent-encoded, as a URL
/// requires: written as they are, the first of them ends the authority
/// and the URL is misread (wrong host, no password).
///
///   ServerUrl url(db.url);
///   url.user = "sqlock_noaccess";  // same password
///   sqlock::Locker other(url.str(), options);
struct ServerUrl {
    explicit ServerUrl(const std::string& url);
    std::string str() const;

    std::string scheme, user, password, host, port, path;
};

/// The password in the URL's userinfo, or "" if none.
std::string password_of(const std::string& url);
/// The port of a server URL with a port (std::invalid_argument without one).
int port_of(const std::string& url);
/// `url` with its user name replaced (same password): to connect as one of
/// the test server's other accounts (sqlock_noaccess, ...).
std::string with_user(const std::string& url, const std::string& user);
/// `url` with its password replaced (percent-encoded as ServerUrl says).
std::string with_password(const std::string& url, const std::string& password);
/// `url` with its host replaced.
std::string with_host(const std::string& url, const std::string& host);
/// `url` with its port replaced.
std::string with_port(const std::string& url, int port);
/// `url` with the query parameter `key=value` appended.
std::string with_param(const std::string& url, const std::string& key, const std::string& value);

}  // namespace sqlock_test
