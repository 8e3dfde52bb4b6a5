// Hostile input to the library: a table of bad names, durations, options,
// URLs and table names. Each must fail with its documented category and a
// one-line message that carries no password, and the lock table must be
// byte-for-byte the same afterwards (the CLI's battery is in cli_test.cpp).
#include <catch2/catch.hpp>
#include <functional>

#include "reliability_support.hpp"

using namespace std::chrono_literals;
using sqlock::errc;
using sqlock_test::fresh_database;
using sqlock_test::lock_options;
using sqlock_test::locker_options;

namespace {

// A password planted in URLs below; it must never come back in a message.
const std::string planted_password = "Pl4ntedSecretPw";

struct Case {
    std::string label;
    errc expected;
    std::function<void()> run;
};

bool one_line(const std::string& s) {
    return !s.empty() && s.find('\n') == std::string::npos && s.find('\r') == std::string::npos;
}

// Runs every case; returns how many there were.
int run_battery(const std::vector<Case>& cases, const std::vector<std::string>& secrets) {
    for (const auto& c : cases) {
        INFO("case: " << c.label);
        try {
            c.run();
            FAIL_CHECK("no error for " << c.label);
        } catch (const sqlock::error& e) {
            const std::string what = e.what();
            INFO("message: " << what);
            CHECK(sqlock::to_string(e.category()) == std::string(sqlock::to_string(c.expected)));
            CHECK(one_line(what));
            for (const auto& secret : secrets)
                if (!secret.empty()) CHECK(what.find(secret) == std::string::npos);
        } catch (const std::exception& e) {
            FAIL_CHECK("not a sqlock::error: " << e.what());
        }
    }
    return static_cast<int>(cases.size());
}

std::string bytes(const char* data, std::size_t n) {
    return std::string(data, n);
}

// A case that opens a Locker on `url` and lists its locks: opening is lazy,
// the first operation reaches the database.
std::function<void()> open_url(const std::string& url) {
    return [url] { sqlock::Locker(url, locker_options().pool_timeout(5s)).list(); };
}

// A case that opens a Locker on `db` with the table `table` and lists it.
std::function<void()> open_table(const sqlock_test::Database& db, const std::string& table) {
    return [url = db.url, table] { sqlock::Locker(url, locker_options().table(table)).list(); };
}

void append(std::vector<Case>& cases, const std::vector<Case>& more) {
    cases.insert(cases.end(), more.begin(), more.end());
}

// Lock and semaphore names; `locker` holds "mine", someone else "sentinel".
std::vector<Case> name_cases(sqlock::Locker& locker) {
    const std::string n129(129, 'n'), n127(127, 's');
    auto try_name = [&](const std::string& name) { return [&, name] { locker.try_lock(name); }; };
    return {
        {"empty name", errc::invalid_argument, try_name("")},
        {"129-byte name", errc::invalid_argument, try_name(n129)},
        {"10000-byte name", errc::invalid_argument, try_name(std::string(10000, 'x'))},
        {"NUL in name", errc::invalid_argument, try_name(bytes("nul\0byte", 8))},
        {"only a NUL", errc::invalid_argument, try_name(bytes("\0", 1))},
        {"invalid UTF-8 ff fe", errc::invalid_argument, try_name("\xff\xfe")},
        {"overlong '/'", errc::invalid_argument, try_name("\xc0\xaf")},
        {"overlong NUL (3 bytes)", errc::invalid_argument, try_name("\xe0\x80\x80")},
        {"UTF-16 surrogate", errc::invalid_argument, try_name("\xed\xa0\x80")},
        {"truncated sequence", errc::invalid_argument, try_name("trunc\xe2\x82")},
        {"beyond U+10FFFF", errc::invalid_argument, try_name("\xf4\x90\x80\x80")},
        {"lone continuation byte", errc::invalid_argument, try_name("\x80")},
        {"5-byte form", errc::invalid_argument, try_name("\xf8\x88\x80\x80\x80")},
        {"Latin-1 e-acute", errc::invalid_argument, try_name("caf\xe9")},
        {"lock() with an empty name", errc::invalid_argument, [&] { locker.lock(""); }},
        {"show() with a bad name", errc::invalid_argument, [&] { locker.show("\xff"); }},
        {"force_release() with a 129-byte name", errc::invalid_argument,
         [&locker, n129] { locker.force_release(n129); }},
        {"release() with an empty token", errc::invalid_argument,
         [&] { locker.release("sentinel", ""); }},
        {"release() with a bad name", errc::invalid_argument,
         [&] { locker.release(bytes("a\0b", 3), "token"); }},
        {"release() with someone else's token", errc::lost,
         [&] { locker.release("sentinel", "not-the-owner"); }},
        {"a second thread-local take of a held name", errc::busy, [&] { locker.lock("mine"); }},
        // Semaphores.
        {"semaphore with an empty name", errc::invalid_argument,
         [&] { locker.try_acquire_slot("", 2); }},
        {"semaphore whose slot rows exceed 128 bytes", errc::invalid_argument,
         [&locker, n127] { locker.try_acquire_slot(n127, 10); }},
        {"capacity 0", errc::invalid_argument, [&] { locker.try_acquire_slot("s", 0); }},
        {"capacity -1", errc::invalid_argument, [&] { locker.acquire_slot("s", -1); }},
        {"capacity 10001", errc::invalid_argument, [&] { locker.try_acquire_slot("s", 10001); }},
    };
}

// Durations as text.
std::vector<Case> duration_text_cases() {
    auto parse = [](const std::string& text) { return [text] { sqlock::parse_duration(text); }; };
    return {
        {"empty duration", errc::invalid_argument, parse("")},
        {"negative duration", errc::invalid_argument, parse("-5")},
        {"fractional duration", errc::invalid_argument, parse("1.5h")},
        {"leading blank", errc::invalid_argument, parse(" 5")},
        {"blank before the unit", errc::invalid_argument, parse("5 s")},
        {"unit twice", errc::invalid_argument, parse("1h1h")},
        {"units ascending", errc::invalid_argument, parse("1m1h")},
        {"bare number after a unit", errc::invalid_argument, parse("1h30")},
        {"unit without a number", errc::invalid_argument, parse("ms")},
        {"unknown unit", errc::invalid_argument, parse("5x")},
        {"exponent", errc::invalid_argument, parse("1e3")},
        {"hexadecimal", errc::invalid_argument, parse("0x10")},
        {"Arabic-Indic digits", errc::invalid_argument, parse("\xd9\xa1\xd9\xa2")},
        {"NUL after the unit", errc::invalid_argument, parse(bytes("5s\0", 3))},
        {"20-digit number", errc::invalid_argument, parse("99999999999999999999")},
        {"int64 max milliseconds", errc::invalid_argument, parse("9223372036854775807ms")},
        {"overflow in days", errc::invalid_argument, parse("106751991167d")},
    };
}

// Lock options, and a renewal of `held` with a bad lease.
std::vector<Case> lock_option_cases(sqlock::Locker& locker, sqlock::Lock& held) {
    return {
        {"zero lease", errc::invalid_argument,
         [&] { locker.try_lock("d", lock_options().expires(0s)); }},
        {"negative lease", errc::invalid_argument,
         [&] { locker.try_lock("d", lock_options().expires(-1s)); }},
        {"lease of 367 days", errc::invalid_argument,
         [&] { locker.try_lock("d", lock_options().expires(std::chrono::hours(24 * 367))); }},
        {"negative wait", errc::invalid_argument,
         [&] { locker.lock("d", lock_options().wait(-1ms)); }},
        {"wait of 400 days", errc::invalid_argument,
         [&] { locker.lock("d", lock_options().wait(std::chrono::hours(24 * 400))); }},
        {"negative minimum hold", errc::invalid_argument,
         [&] { locker.try_lock("d", lock_options().min_hold(-1s)); }},
        {"minimum hold of 367 days", errc::invalid_argument,
         [&] { locker.try_lock("d", lock_options().min_hold(std::chrono::hours(24 * 367))); }},
        {"renew with a zero lease", errc::invalid_argument, [&] { held.renew(0s); }},
        {"renew with a negative lease", errc::invalid_argument, [&] { held.renew(-5s); }},
        {"metadata key not UTF-8", errc::invalid_argument,
         [&] {
             locker.try_lock("d", lock_options().metadata({{"\xff", "v"}}));
         }},
        {"metadata value not UTF-8", errc::invalid_argument,
         [&] {
             locker.try_lock("d", lock_options().metadata({{"k", "\xc0\xaf"}}));
         }},
        {"metadata over 1024 bytes", errc::invalid_argument,
         [&] {
             locker.try_lock("d", lock_options().metadata({{"k", std::string(2000, 'm')}}));
         }},
        {"purge batch of 0", errc::invalid_argument, [&] { locker.purge_expired(0); }},
    };
}

// Options of a Locker on `db`, and table names.
std::vector<Case> locker_option_cases(const sqlock_test::Database& db) {
    const std::string t64(64, 't');
    return {
        {"pool size 0", errc::invalid_argument,
         [&] { sqlock::Locker(db.url, locker_options().pool_size(0)); }},
        {"pool size 1001", errc::invalid_argument,
         [&] { sqlock::Locker(db.url, locker_options().pool_size(1001)); }},
        {"negative pool timeout", errc::invalid_argument,
         [&] { sqlock::Locker(db.url, locker_options().pool_timeout(-1s)); }},
        {"empty table name", errc::invalid_argument, open_table(db, "")},
        {"table starting with a digit", errc::invalid_argument, open_table(db, "1abc")},
        {"table with a dash", errc::invalid_argument, open_table(db, "a-b")},
        {"table with a semicolon", errc::invalid_argument, open_table(db, "x;drop")},
        {"table with SQL", errc::invalid_argument,
         open_table(db, "sqlock_locks; DROP TABLE sqlock_locks")},
        {"table with a blank", errc::invalid_argument, open_table(db, "a b")},
        {"table in double quotes", errc::invalid_argument, open_table(db, "\"q\"")},
        {"table with a quote", errc::invalid_argument, open_table(db, "a'b")},
        {"three-part table name", errc::invalid_argument, open_table(db, "a.b.c")},
        {"table name of 64 bytes", errc::invalid_argument, open_table(db, t64)},
        {"non-ASCII table name", errc::invalid_argument, open_table(db, "\xc3\xbcnicode")},
        {"empty schema", errc::invalid_argument, open_table(db, ".locks")},
        {"empty table after schema", errc::invalid_argument, open_table(db, "ops.")},
    };
}

// URLs, of every backend whatever the backend under test.
std::vector<Case> url_cases() {
    const std::string bad_dir = sqlock_test::scratch_dir() + "/no/such/dir/x.db";
    // SQLite URL parameters are checked whatever the backend under test.
    const std::string sqlite_url = "sqlite://" + sqlock_test::scratch_dir() + "/params.db";
    return {
        {"unknown scheme", errc::invalid_argument,
         open_url("oracle://u:" + planted_password + "@h/db")},
        {"no scheme", errc::invalid_argument, open_url("/just/a/path.db")},
        {"empty scheme", errc::invalid_argument, open_url(":nothing")},
        {"SQLite URL with a host", errc::invalid_argument, open_url("sqlite://host/x.db")},
        {"SQLite URL without a file", errc::invalid_argument, open_url("sqlite:")},
        {"SQLite URL with only a query", errc::invalid_argument,
         open_url("sqlite:?busy_timeout=5")},
        {"busy_timeout not a number", errc::invalid_argument,
         open_url(sqlite_url + "?busy_timeout=abc")},
        {"busy_timeout negative", errc::invalid_argument,
         open_url(sqlite_url + "?busy_timeout=-1")},
        {"busy_timeout too large", errc::invalid_argument,
         open_url(sqlite_url + "?busy_timeout=99999999")},
        {"busy_timeout empty", errc::invalid_argument, open_url(sqlite_url + "?busy_timeout=")},
        {"unknown SQLite parameter", errc::invalid_argument, open_url(sqlite_url + "?mode=ro")},
        {"parameter without a name", errc::invalid_argument, open_url(sqlite_url + "?=x")},
        {"parameter without a value", errc::invalid_argument, open_url(sqlite_url + "?a")},
        {"NUL in the SQLite path", errc::invalid_argument,
         open_url(bytes("sqlite:///tmp/x\0y.db", 20))},
        {"SQLite file in a missing directory", errc::configuration,
         open_url("sqlite://" + bad_dir)},
        {"PostgreSQL port nobody listens on", errc::connection,
         open_url("postgresql://u:" + planted_password + "@127.0.0.1:1/db?connect_timeout=5")},
        {"PostgreSQL password in the query", errc::connection,
         open_url("postgresql://127.0.0.1:1/db?user=u&password=" + planted_password)},
        {"PostgreSQL URL with a bad percent escape", errc::invalid_argument,
         open_url("postgresql://u:" + planted_password + "%zz@127.0.0.1:1/db")},
    };
}

}  // namespace

TEST_CASE("hostile input to the library: right category, one line, table unchanged",
          "[hostile][needs:table_dump_sql][needs:hostile_inputs]") {
    auto db = fresh_database();
    auto locker = db.open();
    const reliability::Bystanders bystanders(db);
    const std::string before = reliability::dump_table(db);
    auto held = locker.lock("mine", lock_options().expires(1h));
    const std::string with_mine = reliability::dump_table(db);

    std::vector<Case> cases = name_cases(locker);
    append(cases, duration_text_cases());
    append(cases, lock_option_cases(locker, held));
    append(cases, locker_option_cases(db));
    append(cases, url_cases());
    // Use after release.
    cases.push_back({"a released Lock", errc::invalid_argument, [&] {
                         auto lock = locker.lock("short-lived");
                         lock.release();
                         (void)lock.id();
                     }});
    // And what is refused only on this backend.
    for (const sqlock_test::HostileInput& input :
         sqlock_test::backend_context().hooks.hostile_inputs(planted_password))
        cases.push_back({input.what, input.category,
                         input.url.empty() ? std::function<void()>(open_table(db, input.table))
                                           : std::function<void()>(open_url(input.url))});

    const std::string server_password = sqlock_test::password_of(db.url);
    const int count = run_battery(cases, {planted_password, server_password});
    CHECK(reliability::dump_table(db) == with_mine);
    held.release();
    CHECK(reliability::dump_table(db) == before);
    WARN("hostile library inputs (" << sqlock_test::backend() << "): " << count);
}

// Regression tests for library bugs this suite found (fixed since).

TEST_CASE("a '?' or '#' in a URL password does not escape redaction",
          "[hostile][redaction][needs:server][needs:redacted_urls]") {
    // Redaction used to end the authority at the first '?' or '#' and then
    // find no '@' before it. Found by fuzz_url. Each backend's URL grammar
    // says where its userinfo ends (its hook).
    // SQLite URLs have no password.
    const auto redacted_urls = sqlock_test::backend_context().hooks.redacted_urls;
    for (const auto& [password, url] : redacted_urls(planted_password)) {
        INFO("password " << password.substr(0, 4));
        sqlock::Locker locker(url);
        CHECK(locker.url().find(password) == std::string::npos);
        try {
            locker.list();  // port 1: nothing listens there
            FAIL("connected to port 1");
        } catch (const sqlock::error& e) {
            CHECK(e.category() == sqlock::errc::connection);
            CHECK(std::string(e.what()).find(planted_password) == std::string::npos);
        }
    }
}

TEST_CASE("control characters in a SQLite path do not split messages", "[hostile]") {
    // The path used to go into messages unescaped, unlike lock names.
    const std::string url = "sqlite://" + sqlock_test::scratch_dir() + "/no\nsuch/x.db";
    try {
        sqlock::Locker(url).list();
        FAIL("opened a file in a missing directory");
    } catch (const sqlock::error& e) {
        CHECK(one_line(e.what()));
    }
}

TEST_CASE("a malformed PostgreSQL URL is invalid_argument, not a connection failure", "[hostile]") {
    // libpq rejects the URL before any network traffic; errc::connection
    // ("cannot be reached", exit 69 in the CLI) used to send the user
    // looking at the network instead of at a typo.
    for (const std::string url :
         {"postgresql://127.0.0.1:1/db?bogus=1", "postgresql://127.0.0.1:1/db?novalue"}) {
        INFO(url);
        try {
            sqlock::Locker(url).list();
            FAIL("no error");
        } catch (const sqlock::error& e) {
            CHECK(e.category() == errc::invalid_argument);
        }
    }
}
