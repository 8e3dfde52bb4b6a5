// The names of the rows that are not a plain lock's (src/contract/backend.hpp): a
// semaphore's slots ("name#N") and a shared hold's rows ("name#shared-" and
// 16 characters of the holder's token). Every backend's statements select
// these rows by the same rules, so a name read back the wrong way would be a
// slot or a holder counted twice, or not at all.
#include <catch2/catch.hpp>
#include <string>

#include "contract/backend.hpp"
#include "sqlock/error.hpp"

using namespace sqlock::detail;

TEST_CASE("a slot's row is the name, '#', and the slot's number", "[unit][names]") {
    CHECK(slot_lockstring("backup", 1) == "backup#1");
    CHECK(slot_lockstring("a#b", 12) == "a#b#12");
    CHECK(slot_number("backup#1", "backup", 3) == 1);
    CHECK(slot_number("backup#3", "backup", 3) == 3);
    CHECK(slot_number("a#b#12", "a#b", 12) == 12);
}

TEST_CASE("only the rows a semaphore's own statements write are its slots", "[unit][names]") {
    CHECK(slot_number("backup#4", "backup", 3) == 0);   // beyond its capacity
    CHECK(slot_number("backup#0", "backup", 3) == 0);   // slots count from 1
    CHECK(slot_number("backup#01", "backup", 3) == 0);  // not a number it writes
    CHECK(slot_number("backups#1", "backup", 3) == 0);  // another name
    CHECK(slot_number("backup#1x", "backup", 3) == 0);  // not a slot at all
    CHECK(slot_number("backup", "backup", 3) == 0);     // the plain lock of the name
    CHECK(slot_number("xbackup#1", "backup", 3) == 0);  // the name must be all before '#'
    CHECK(slot_number("backup#99999999999999999999", "backup", 3) == 0);  // no overflow
}

TEST_CASE("a trailing '#' and digits is where a slot's number starts", "[unit][names]") {
    CHECK(slot_suffix_at("job#7") == 3);
    CHECK(slot_suffix_at("#7") == 0);
    CHECK(slot_suffix_at("job#7#8") == 5);
    CHECK(slot_suffix_at("job#") == std::string::npos);
    CHECK(slot_suffix_at("job7") == std::string::npos);
    CHECK(slot_suffix_at("job#shared-0123456789abcdef") == std::string::npos);
    CHECK(slot_suffix_at("") == std::string::npos);
}

TEST_CASE("a shared holder's row names its name and 16 characters of its token", "[unit][names]") {
    const std::string token = "0123456789abcdef0123456789abcdef";
    const std::string row = shared_lockstring("report", token);
    CHECK(row == "report#shared-0123456789abcdef");
    CHECK(shared_name_of(row) == std::optional<std::string>("report"));
    // Names with the infix in them still read back whole.
    CHECK(shared_name_of(shared_lockstring("a#shared-b", token)) ==
          std::optional<std::string>("a#shared-b"));
    CHECK(shared_name_of(shared_lockstring("", token)) == std::optional<std::string>(""));
}

TEST_CASE("rows that are not a shared holder's have no name of one", "[unit][names]") {
    CHECK_FALSE(shared_name_of("report"));
    CHECK_FALSE(shared_name_of("report#1"));
    CHECK_FALSE(shared_name_of("report#shared-0123456789abcde"));   // 15 characters
    CHECK_FALSE(shared_name_of("report#shared-0123456789abcdeg"));  // not hex
    CHECK_FALSE(shared_name_of("report#shared+0123456789abcdef"));  // another infix
}

TEST_CASE("the holders' rows of a name are exactly one bytewise range", "[unit][names]") {
    const std::string from = shared_prefix("report");
    const std::string to = shared_prefix_end("report");
    auto in_range = [&](const std::string& s) { return from <= s && s < to; };
    CHECK(in_range(shared_lockstring("report", "0000000000000000")));
    CHECK(in_range(shared_lockstring("report", "ffffffffffffffff")));
    CHECK_FALSE(in_range("report"));
    CHECK_FALSE(in_range("report#1"));
    CHECK_FALSE(in_range(shared_lockstring("report2", "0000000000000000")));
    CHECK_FALSE(in_range(shared_lockstring("repor", "0000000000000000")));
}

TEST_CASE("a name held shared must leave room for its holders' rows", "[unit][names]") {
    CHECK_NOTHROW(validate_shared_name(std::string(max_shared_name_bytes, 'n')));
    try {
        validate_shared_name(std::string(max_shared_name_bytes + 1, 'n'));
        FAIL("a name one byte too long was accepted");
    } catch (const sqlock::error& e) {
        CHECK(e.category() == sqlock::errc::invalid_argument);
    }
    // The longest such name's holder rows still fit the 128-byte column.
    CHECK(shared_lockstring(std::string(max_shared_name_bytes, 'n'), std::string(32, 'a')).size() <=
          128);
}
