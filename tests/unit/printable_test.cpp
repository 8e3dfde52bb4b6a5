// Showing untrusted text (src/text/): lock names, holders' JSON and server
// messages end up in terminals, logs and error messages, so the one rule,
// printable(), must leave no control character, quote or broken UTF-8 in
// what it returns, and a URL must lose its passwords before it is shown.
// The fuzzers check the rule on random input; these pin down each case.
#include <catch2/catch.hpp>
#include <string>

#include "text.hpp"

// Qualified: a unity batch may also see sqlock::detail::printable().
namespace text = sqlock::text;

TEST_CASE("plain text and well-formed UTF-8 are shown as they are", "[unit][printable]") {
    CHECK(text::printable("nightly-report") == "nightly-report");
    CHECK(text::printable("caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x94\x92") ==
          "caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x94\x92");
    CHECK(text::printable("a \"quoted\" name") == "a \"quoted\" name");
}

TEST_CASE("controls, backslashes and single quotes are escaped as \\xNN", "[unit][printable]") {
    CHECK(text::printable("a\nb") == "a\\x0ab");
    CHECK(text::printable("tab\there") == "tab\\x09here");
    CHECK(text::printable(std::string("nul\0byte", 8)) == "nul\\x00byte");
    CHECK(text::printable("\x1b[31mred") == "\\x1b[31mred");
    CHECK(text::printable("del\x7f") == "del\\x7f");
    CHECK(text::printable("back\\slash") == "back\\x5cslash");
    CHECK(text::printable("it's") == "it\\x27s");
}

TEST_CASE("bytes that are not UTF-8, and C1 controls, are escaped byte by byte",
          "[unit][printable]") {
    CHECK(text::printable("\xff\xfe") == "\\xff\\xfe");
    CHECK(text::printable("\xc0\xaf") == "\\xc0\\xaf");           // an overlong '/'
    CHECK(text::printable("\xed\xa0\x80") == "\\xed\\xa0\\x80");  // a surrogate
    CHECK(text::printable("\xc2\x9b") == "\\xc2\\x9b");           // U+009B, a CSI to some terminals
    CHECK(text::printable("\xe2\x9c") == "\\xe2\\x9c");           // a truncated sequence
}

TEST_CASE("a limit shows that many bytes, never half a character, then '...'",
          "[unit][printable]") {
    CHECK(text::printable("abcdef", 3) == "abc...");
    CHECK(text::printable("abc", 3) == "abc");
    // "é" is two bytes: cut after its first, it is escaped, not split.
    CHECK(text::printable("a\xc3\xa9", 2) == "a\\xc3...");
}

TEST_CASE("a shown URL has no password, in userinfo or in a parameter", "[unit][printable]") {
    CHECK(text::redact_url("postgresql://app:s3cret@db.example/locks") ==
          "postgresql://app:***@db.example/locks");
    CHECK(text::redact_url("postgresql://app@db/locks?password=s3cret&sslmode=require") ==
          "postgresql://app@db/locks?password=***&sslmode=require");
    CHECK(text::redact_url("mariadb://app:p%40ss@db/locks") == "mariadb://app:***@db/locks");
    CHECK(text::redact_url("sqlite:///var/lib/locks.db") == "sqlite:///var/lib/locks.db");
    const std::string shown = text::redact_url("postgresql://app:pa\nss@db/locks");
    CHECK(shown.find("pa") == std::string::npos);
    CHECK(shown.find('\n') == std::string::npos);
}
