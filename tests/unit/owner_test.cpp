// The owner record (src/base/owner.hpp): the `locked_by` JSON sqlock writes, and
// its lenient reading of whatever another program wrote there. Listing,
// take-overs and the waiting line's messages all read holders through
// parse_holder(), so it must never throw and must read back what
// make_owner() wrote.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <map>
#include <string>

#include "base/owner.hpp"
#include "sqlock/error.hpp"

using namespace sqlock::detail;
using namespace std::chrono_literals;

TEST_CASE("an owner's locked_by reads back as this process, with its token", "[unit][owner]") {
    const Owner owner = make_owner({{"job", "nightly"}});
    CHECK(owner.token.size() == 32);
    CHECK(owner.token.find_first_not_of("0123456789abcdef") == std::string::npos);
    const sqlock::Holder h = parse_holder(owner.locked_by);
    CHECK(h.guid == owner.token);
    CHECK(h.pid == static_cast<long>(getpid()));
    CHECK(h.host == this_host());
    CHECK(h.user == this_user());
    CHECK(h.program == this_program());
    CHECK(h.min_hold_ms == 0);
    CHECK(h.lease_ms == 0);
}

TEST_CASE("every owner has a token of its own", "[unit][owner]") {
    const Owner a = make_owner({});
    const Owner b = make_owner({});
    CHECK(a.token != b.token);
    CHECK(a.locked_by != b.locked_by);
    CHECK(random_token() != random_token());
}

TEST_CASE("an owner with a minimum hold records it and the lease", "[unit][owner]") {
    const Owner owner = make_owner({}, 5min, 1h);
    const sqlock::Holder h = parse_holder(owner.locked_by);
    CHECK(h.min_hold_ms == 300'000);
    CHECK(h.lease_ms == 3'600'000);
}

TEST_CASE("metadata that would make locked_by longer than 1024 bytes is refused", "[unit][owner]") {
    try {
        make_owner({{"note", std::string(1100, 'x')}});
        FAIL("an oversized owner was made");
    } catch (const sqlock::error& e) {
        CHECK(e.category() == sqlock::errc::invalid_argument);
    }
}

TEST_CASE("DBIx::Locker's locked_by reads as its host, pid and guid", "[unit][owner]") {
    const sqlock::Holder h = parse_holder(
        R"({"guid":"A1B2C3D4-0000-1111-2222-333344445555","host":"db1","pid":"4242"})");
    CHECK(h.host == "db1");
    CHECK(h.pid == 4242);
    CHECK(h.guid == "A1B2C3D4-0000-1111-2222-333344445555");
    CHECK(h.user.empty());
}

TEST_CASE("a locked_by that is not sqlock's JSON reads as no holder, never a throw",
          "[unit][owner]") {
    for (const std::string& text :
         {std::string(), std::string("not json"), std::string("[1,2,3]"), std::string("null"),
          std::string(R"({"host":{"nested":true},"pid":[1],"guid":[7]})"),
          std::string(R"({"host":"h","pid":1e300})"), std::string(5000, '['),
          std::string("{\"host\":\"\xff\xfe\"}")}) {
        INFO("locked_by: " << text.substr(0, 60));
        sqlock::Holder h;
        CHECK_NOTHROW(h = parse_holder(text));
        CHECK(h.pid == 0);
        CHECK(h.guid.empty());
    }
    // A number where a string was expected is shown as the number.
    CHECK(parse_holder(R"({"guid":7})").guid == "7");
}
