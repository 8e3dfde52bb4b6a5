// Reading the core's records from query rows (src/contract/records.hpp): numbers as
// the databases write them, whatever the program's locale; booleans in every
// form a database sends; the answer of a combined pause check and run start;
// a lock row, and what its reads say they were doing.
#include <catch2/catch.hpp>
#include <clocale>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "contract/records.hpp"
#include "needs.hpp"
#include "sqlock/error.hpp"

using sqlock::detail::Field;
using sqlock::detail::Value;

namespace {

// Sets LC_ALL to the first installed locale that writes decimals with a
// comma, for as long as it lives; none() when there is none.
class CommaLocale {
  public:
    CommaLocale() {
        for (const char* name : {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "fr_FR.utf8",
                                 "nl_NL.UTF-8", "ru_RU.UTF-8"})
            if (std::setlocale(LC_ALL, name)) {
                name_ = name;
                return;
            }
    }
    ~CommaLocale() { std::setlocale(LC_ALL, "C"); }
    bool none() const { return name_.empty(); }

  private:
    std::string name_;
};

// A locale that writes a decimal comma is installed ([needs:comma-locale]).
// Not something the test command installs: never required.
const sqlock_test::DeclareNeed comma_locale{
    {"comma-locale",
     [] {
         return CommaLocale().none()
                    ? std::string(
                          "no locale with a decimal comma is installed (`locale -a`; one can "
                          "be made with `localedef -i de_DE -f UTF-8 DIR/de_DE.UTF-8` and "
                          "LOCPATH=DIR)")
                    : std::string();
     },
     nullptr}};

}  // namespace

TEST_CASE("numbers are read as the database writes them", "[records]") {
    CHECK(sqlock::detail::as_double(Field("12.345")) == Approx(12.345));
    CHECK(sqlock::detail::as_double(Field("-1e+13")) == -1e13);
    CHECK(sqlock::detail::as_double(Field("0.001")) == Approx(0.001));
    CHECK(sqlock::detail::as_double(Field()) == 0.0);
    CHECK(sqlock::detail::as_int64(Field("9007199254740993")) == 9007199254740993);
    CHECK(sqlock::detail::as_int64(Field("-42")) == -42);
    CHECK(sqlock::detail::as_int64(Field()) == 0);
}

TEST_CASE("a decimal reads the same under a locale that writes a comma",
          "[records][locale][needs:comma-locale]") {
    CommaLocale comma;
    REQUIRE_FALSE(comma.none());
    char buf[16];
    std::snprintf(buf, sizeof buf, "%.1f", 1.5);
    REQUIRE(std::string(buf) == "1,5");  // the locale is in force
    CHECK(sqlock::detail::as_double(Field("12.345")) == Approx(12.345));
    CHECK(sqlock::detail::as_double(Field("0.500")) == 0.5);
}

TEST_CASE("booleans: any integer but zero, t and true are true", "[records]") {
    for (const char* yes : {"1", "2", "-1", "t", "true"}) {
        INFO(yes);
        CHECK(sqlock::detail::as_bool(Field(yes)));
    }
    for (const char* no : {"0", "f", "false", "", "x", "1x"}) {
        INFO(no);
        CHECK_FALSE(sqlock::detail::as_bool(Field(no)));
    }
    CHECK_FALSE(sqlock::detail::as_bool(Field()));
}

TEST_CASE("a run start reads as a run, as a pause, or as an error", "[records]") {
    const std::vector<Value> params = {Value::text("nightly")};
    const auto run = sqlock::detail::read_run_start({Field("7"), {}, {}, {}, {}, {}}, params);
    CHECK(run.run_id == 7);
    CHECK_FALSE(run.pause);

    const auto pause = sqlock::detail::read_run_start(
        {{}, Field("nightly"), Field("ops@h"), Field(""), Field("2030-01-01 00:00:00.000"), {}},
        params);
    CHECK_FALSE(pause.run_id);
    REQUIRE(pause.pause);
    CHECK(pause.pause->name == "nightly");
    CHECK(pause.pause->paused_by == "ops@h");
    CHECK_FALSE(pause.pause->until);

    try {
        sqlock::detail::read_run_start({{}, {}, {}, {}, {}, {}}, params);
        FAIL("a row with neither a run nor a pause was read");
    } catch (const sqlock::error& e) {
        CHECK(e.category() == sqlock::errc::backend);
        CHECK_THAT(e.what(), Catch::Matchers::Contains("neither a run nor a pause") &&
                                 Catch::Matchers::Contains("'nightly'"));
    }
}

TEST_CASE("a lock row reads from its columns, wherever they start", "[records]") {
    const std::vector<Field> columns{Field("x"),
                                     Field("42"),
                                     Field("job"),
                                     Field("2030-01-01 00:00:00.000"),
                                     Field("2030-01-01 00:01:00.000"),
                                     {},
                                     Field("59.5")};
    const sqlock::detail::Row row = sqlock::detail::read_lock_row(columns, 1);
    CHECK(row.id == 42);
    CHECK(row.lockstring == "job");
    CHECK(row.created == "2030-01-01 00:00:00.000");
    CHECK(row.expires == "2030-01-01 00:01:00.000");
    CHECK(row.locked_by.empty());  // another program's NULL
    CHECK(row.seconds_left == 59.5);
    CHECK_THROWS(sqlock::detail::read_lock_row(columns, 2));  // a column short
}

TEST_CASE("the lock-row reads say what they were doing, as the backends did",
          "[records][statements]") {
    using sqlock::detail::describe_query;
    using sqlock::detail::Query;
    CHECK(describe_query(Query::lock_row, {Value::text("job")}) == "reading lock 'job'");
    CHECK(describe_query(Query::lock_rows, {Value::text(""), Value::integer(0)}) ==
          "listing locks");
    CHECK(describe_query(Query::lock_rows, {Value::text("job#"), Value::integer(1)}) ==
          "listing locks 'job#'");
    CHECK(describe_query(Query::lock_held, {Value::integer(7), Value::text("me")}) ==
          "checking lock id '7'");
}
