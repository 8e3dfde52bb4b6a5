// fuzz_url — parse_database_url(), the SQLite URL grammar and redact_url() on
// arbitrary input, and the promise that matters: a password never survives
// redaction.
//
// The input is used twice: as a URL as it is (nothing may crash; every
// failure is a sqlock::error), and cut at \x01 bytes into user, password,
// host and rest, from which a URL is built with a password libpq would take
// as the password (it ends the userinfo at the first '@' and needs it before
// any '/'). That password must then be absent from redact_url(), from
// parse_database_url().redacted and from the PostgreSQL backend's message
// redactor, whatever surrounds it.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "backends/postgres/postgres_redactor.hpp"
#include "backends/sqlite/sqlite_url.hpp"
#include "fuzz_check.hpp"
#include "loading/url.hpp"
#include "sqlock/error.hpp"
#include "text.hpp"

using sqlock::detail::parse_database_url;
using sqlock::text::redact_url;

namespace {

std::vector<std::string> split(const std::string& s, char sep, std::size_t parts) {
    std::vector<std::string> out(1);
    for (char c : s) {
        if (c == sep && out.size() < parts)
            out.emplace_back();
        else
            out.back() += c;
    }
    out.resize(parts);
    return out;
}

std::string without(std::string s, const std::string& banned) {
    std::string out;
    for (char c : s)
        if (banned.find(c) == std::string::npos) out += c;
    return out;
}

void check_hidden(const std::string& url, const std::string& password) {
    const std::string redacted = redact_url(url);
    FUZZ_CHECK(redacted.find(password) == std::string::npos, "redact_url(" + url + ")");
    try {
        auto parsed = parse_database_url(url);
        FUZZ_CHECK(parsed.redacted.find(password) == std::string::npos, url);
        // No extra secrets: it must find the password in the URL by itself.
        sqlock::detail::postgres::Redactor redact(parsed, {});
        const std::string message =
            redact("could not connect to " + url + ": password \"" + password + "\" rejected");
        FUZZ_CHECK(message.find(password) == std::string::npos, "Redactor: " + url);
        FUZZ_CHECK(one_line(message), "Redactor output on two lines: " + url);
    } catch (const sqlock::error& e) {
        FUZZ_CHECK(std::string(e.what()).find(password) == std::string::npos, e.what());
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string input(reinterpret_cast<const char*>(data), size);

    // 1. As it is: no crash, only sqlock::error, never an empty redaction of
    //    a non-empty URL.
    FUZZ_CHECK(redact_url(input).size() >= (input.empty() ? 0 : 1), input);
    try {
        auto url = parse_database_url(input.empty() ? std::string("sqlite:x") : input);
        FUZZ_CHECK(!url.redacted.empty(), input);
        // The SQLite backend's own grammar (the others hand the URL to
        // their client library).
        if (url.backend == "sqlite") sqlock::detail::parse_sqlite_url(url);
    } catch (const sqlock::error&) {
    }

    // 2. Built around a password libpq would use.
    auto parts = split(input, '\x01', 5);
    // No blanks outside the password: the message redactor folds runs of
    // them, which could spell the password out of other parts.
    const std::string blanks = " \t\r\n";
    const std::string user = without(parts[0], std::string("@/:?#\0", 6) + blanks);
    // Also no '*' or '"': redaction's "***" and the message around the
    // password could otherwise spell it again by coincidence.
    std::string password = without(parts[1], std::string("@/*\"\0", 5));
    const std::string host = without(parts[2], std::string("@/?#\0", 5) + blanks);
    const std::string rest = without(parts[3], std::string("\0", 1) + blanks);
    const bool in_query = !parts[4].empty() && (parts[4][0] & 1);
    // Short passwords turn up elsewhere in the URL by chance ("a" in "host").
    if (password.size() < 6) return 0;
    // The URL is left + password + right; redaction changes only the
    // password, so it must not already be spelled within left or right.
    std::string left, right;
    if (in_query) {
        // A password= query parameter ends at the next '&'.
        password = without(password, "&#");
        if (password.size() < 6) return 0;
        left = "postgresql://" + host + "/db?" + without(rest, "&#") + "&password=";
    } else {
        left = "postgresql://" + user + ":";
        right = "@" + host + "/" + rest;
    }
    if (left.find(password) != std::string::npos || right.find(password) != std::string::npos)
        return 0;
    // Nor by the \xNN escaping of text::printable() around it (a password
    // holding the text "\x16" next to a 0x16 byte): a coincidence, not a leak.
    using sqlock::text::printable;
    if (printable(left).find(password) != std::string::npos ||
        printable(right).find(password) != std::string::npos ||
        printable(left + "***" + right).find(password) != std::string::npos)
        return 0;
    const std::string url = left + password + right;
    check_hidden(url, password);
    return 0;
}
