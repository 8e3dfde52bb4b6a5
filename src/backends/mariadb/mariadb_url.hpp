// MariaUrl — what a mariadb:// or mysql:// URL says, split for the C API.
//
//   mariadb://[user[:password]@][host][:port][,host[:port]...][/database][?param=value&...]
//   mysql://...                                  (the same backend)
//
// Several hosts make a host list (the nodes of a Galera cluster): a
// connection goes to the first that answers and is ready
// (mariadb_link.hpp); each entry has its own port, 3306 when it names none.
// The userinfo ends at the last '@' before the first '/', the rule sqlock's
// redaction uses (src/text/passwords.cpp), so a password with a raw '@' is
// read, and hidden, whole; user, password and database are percent-decoded.
// A host in brackets is an IPv6 address ([::1]). Parameters:
//
//   socket=PATH        connect through this Unix socket (the host is ignored)
//   ssl-mode=MODE      disabled | preferred (default) | required |
//                      verify-ca | verify-identity
//   ssl-ca=FILE, ssl-capath=DIR, ssl-cert=FILE, ssl-key=FILE
//
// Without a host, or with host "localhost", the C connector uses the default
// Unix socket; with no user, the login name of this process. A host list
// names hosts only: no empty entry, no socket= beside it, at most
// max_hosts entries.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "loading/url.hpp"

namespace sqlock::detail::mariadb {

enum class SslMode { disabled, preferred, required, verify_ca, verify_identity };

/// One server of a URL's host list.
struct MariaHost {
    std::string host;   // "" = the C connector's default (localhost, its socket)
    unsigned port = 0;  // 0 = 3306

    /// "db1:3306", "[::1]:3307", "localhost" (as the URL wrote it, for messages).
    std::string label() const;
};

/// The longest host list a URL may have.
constexpr std::size_t max_hosts = 32;

struct MariaUrl {
    std::vector<MariaHost> hosts;  // one at least, in the URL's order
    std::string user;
    std::string password;
    bool has_password = false;
    std::string database;
    std::string socket;
    SslMode ssl_mode = SslMode::preferred;
    std::string ssl_ca, ssl_capath, ssl_cert, ssl_key;
};

/// Reads `url` (scheme mariadb or mysql). Throws errc::invalid_argument with
/// a one-line message naming the redacted URL for anything it cannot read:
/// a bad port, an unknown parameter or ssl-mode, a missing database name,
/// an empty entry in a host list, a list with socket= or longer than
/// max_hosts.
MariaUrl parse_mariadb_url(const DatabaseUrl& url);

}  // namespace sqlock::detail::mariadb
