// MariaUrl — what a mariadb:// or mysql:// URL says, split for the C API.
//
//   mariadb://[user[:password]@][host][:port][/database][?param=value&...]
//   mysql://...                                  (the same backend)
//
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
// Unix socket; with no user, the login name of this process.
#pragma once

#include <string>

#include "loading/url.hpp"

namespace sqlock::detail::mariadb {

enum class SslMode { disabled, preferred, required, verify_ca, verify_identity };

struct MariaUrl {
    std::string host;   // "" = the C connector's default (localhost, its socket)
    unsigned port = 0;  // 0 = 3306
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
/// a bad port, an unknown parameter or ssl-mode, a missing database name.
MariaUrl parse_mariadb_url(const DatabaseUrl& url);

}  // namespace sqlock::detail::mariadb
