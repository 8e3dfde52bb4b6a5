// The MariaDB URL's host list (src/backends/mariadb/mariadb_url.hpp): read
// entry by entry, each with its own port; anything else refused with one
// line that names the entry and never the password.
#include <catch2/catch.hpp>
#include <string>

#include "loading/url.hpp"
#include "mariadb_url.hpp"
#include "sqlock/error.hpp"

using sqlock::detail::parse_database_url;
using sqlock::detail::mariadb::parse_mariadb_url;

namespace {

const std::string password = "hunter2SecretPw";

sqlock::detail::mariadb::MariaUrl read(const std::string& hosts) {
    return parse_mariadb_url(
        parse_database_url("mariadb://app:" + password + "@" + hosts + "/ops"));
}

// The message of the error reading `hosts` gives, which must be
// errc::invalid_argument on one line without the password.
std::string refusal(const std::string& hosts) {
    try {
        read(hosts);
    } catch (const sqlock::error& e) {
        CHECK(e.category() == sqlock::errc::invalid_argument);
        const std::string what = e.what();
        CHECK(what.find('\n') == std::string::npos);
        CHECK(what.find(password) == std::string::npos);
        return what;
    }
    FAIL("read '" << hosts << "' without an error");
    return "";
}

}  // namespace

TEST_CASE("a MariaDB URL with one host reads as before", "[mariadb][url]") {
    const auto u = read("db.internal:3307");
    REQUIRE(u.hosts.size() == 1);
    CHECK(u.hosts[0].host == "db.internal");
    CHECK(u.hosts[0].port == 3307);
    CHECK(u.user == "app");
    CHECK(u.password == password);
    CHECK(u.database == "ops");
    const auto bare = read("db");
    REQUIRE(bare.hosts.size() == 1);
    CHECK(bare.hosts[0].port == 0);
    const auto none = parse_mariadb_url(parse_database_url("mariadb:///ops"));
    REQUIRE(none.hosts.size() == 1);
    CHECK(none.hosts[0].host.empty());
}

TEST_CASE("a MariaDB host list is read entry by entry, each with its own port", "[mariadb][url]") {
    const auto u = read("n1:3306,n2:3307,n3,[::1]:3308,[fe80::1]");
    REQUIRE(u.hosts.size() == 5);
    CHECK(u.hosts[0].host == "n1");
    CHECK(u.hosts[0].port == 3306);
    CHECK(u.hosts[1].host == "n2");
    CHECK(u.hosts[1].port == 3307);
    CHECK(u.hosts[2].host == "n3");
    CHECK(u.hosts[2].port == 0);  // 3306
    CHECK(u.hosts[3].host == "::1");
    CHECK(u.hosts[3].port == 3308);
    CHECK(u.hosts[4].host == "fe80::1");
    CHECK(u.hosts[4].label() == "[fe80::1]");
    CHECK(u.hosts[1].label() == "n2:3307");
    // The password is read whole, whatever the hosts.
    CHECK(u.password == password);
}

TEST_CASE("a bad entry of a MariaDB host list is refused, naming the entry", "[mariadb][url]") {
    CHECK(refusal("n1:3306,n2:x,n3").find("host 2 of 3 has a port that must be a number") !=
          std::string::npos);
    CHECK(refusal("n1,,n3").find("host 2 of 3 is empty") != std::string::npos);
    CHECK(refusal("n1,n2,").find("host 3 of 3 is empty") != std::string::npos);
    CHECK(refusal(",n1").find("host 1 of 2 is empty") != std::string::npos);
    CHECK(refusal("n1,[::1").find("host 2 of 2 has an unterminated '['") != std::string::npos);
    CHECK(refusal("n1,[::1]x").find("host 2 of 2 has unexpected text after ']'") !=
          std::string::npos);
    CHECK(refusal("n1:99999,n2").find("host 1 of 2 has a port") != std::string::npos);
    CHECK(refusal("n1,n2:0").find("not '0'") != std::string::npos);
    CHECK(refusal("n1,n2:-1").find("not '-1'") != std::string::npos);
    CHECK(refusal("n1,a:b:c").find("host 2 of 2 has a port") != std::string::npos);
    std::string many = "h0";
    for (int i = 1; i <= 40; ++i) many += ",h" + std::to_string(i);
    CHECK(refusal(many).find("lists 41 hosts; at most 32") != std::string::npos);
    // One host keeps its old wording.
    CHECK(refusal("n1:x").find("the port must be a number from 1 to 65535, not 'x'") !=
          std::string::npos);
    // The redacted URL is named, the password is not.
    CHECK(refusal("n1,,n3").find("mariadb://app:***@n1,,n3/ops") != std::string::npos);
}

TEST_CASE("a MariaDB host list cannot go with socket=", "[mariadb][url]") {
    try {
        parse_mariadb_url(parse_database_url("mariadb://app:" + password +
                                             "@n1,n2/ops?socket=/run/mysqld/mysqld.sock"));
        FAIL("a host list with socket= was read");
    } catch (const sqlock::error& e) {
        CHECK(e.category() == sqlock::errc::invalid_argument);
        CHECK(std::string(e.what()).find("socket= names one server") != std::string::npos);
    }
}
