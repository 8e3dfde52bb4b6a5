// Ownership: release and renew touch only our own row; forks leave it alone.
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <functional>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "test_support.hpp"

using namespace std::chrono_literals;
using sqlock_test::eventually;
using sqlock_test::fresh_database;
using sqlock_test::lock_options;

namespace {
bool expired(sqlock::Locker& locker, const std::string& name) {
    auto info = locker.show(name);
    return info && info->expired();
}
}  // namespace

TEST_CASE("locked_by is JSON naming host, pid, guid, user and program", "[ownership]") {
    auto db = fresh_database();
    auto locker = db.open();
    auto lock = locker.lock("who", lock_options().metadata({{"ticket", "OPS-7"}}));
    auto j = nlohmann::json::parse(lock.locked_by());
    CHECK(j.at("pid").get<long>() == getpid());
    CHECK(j.at("guid").get<std::string>() == lock.owner_token());
    CHECK_FALSE(j.at("host").get<std::string>().empty());
    CHECK_FALSE(j.at("user").get<std::string>().empty());
    CHECK_FALSE(j.at("program").get<std::string>().empty());
    CHECK(j.at("meta").at("ticket") == "OPS-7");
    auto info = locker.show("who");
    REQUIRE(info);
    CHECK(info->holder.pid == getpid());
    CHECK(info->holder.guid == lock.owner_token());
}

TEST_CASE("an expired lock is taken over with a new id; the stale handle is lost", "[ownership]") {
    auto db = fresh_database();
    auto a = db.open();
    auto b = db.open();
    auto stale = a.lock("takeover", lock_options().expires(200ms));
    REQUIRE(eventually([&] { return expired(b, "takeover"); }));
    auto fresh = b.try_lock("takeover");
    REQUIRE(fresh);
    CHECK(fresh->id() > stale.id());

    // The stale handle can neither renew nor release the new holder's row.
    try {
        stale.renew(1h);
        FAIL("renew of a taken-over lock must throw");
    } catch (const sqlock::error& e) {
        CHECK(e.category() == sqlock::errc::lost);
    }
    CHECK_FALSE(stale.held());
    CHECK(stale.lost());
    try {
        stale.release();
        FAIL("release of a taken-over lock must throw");
    } catch (const sqlock::error& e) {
        CHECK(e.category() == sqlock::errc::lost);
    }
    auto info = b.show("takeover");
    REQUIRE(info);
    CHECK(info->id == fresh->id());
    CHECK(fresh->held());
}

TEST_CASE("an expired lock does not block even before the reaper runs", "[ownership]") {
    auto db = fresh_database();
    auto a = db.open();
    auto old = a.lock("lapsed", lock_options().expires(100ms));
    auto b = db.open();
    REQUIRE(eventually([&] { return b.try_lock("lapsed").has_value(); }));
}

TEST_CASE("renewing an expired lock fails even if nobody took it", "[ownership]") {
    auto db = fresh_database();
    auto locker = db.open();
    auto lock = locker.lock("late", lock_options().expires(100ms));
    REQUIRE(eventually([&] { return expired(locker, "late"); }));
    CHECK_THROWS_MATCHES(lock.renew(1h), sqlock::error,
                         Catch::Predicate<sqlock::error>([](const sqlock::error& e) {
                             return e.category() == sqlock::errc::lost;
                         }));
}

namespace {

// A child made by `spawn` (which returns 0 in the child) destroys the Lock it
// inherited: the parent's row must stay, and stay the parent's.
void child_destroys_inherited_lock(const std::function<long()>& spawn) {
    auto db = fresh_database();
    auto locker = db.open();
    auto lock = locker.lock("parent");
    std::fflush(nullptr);
    const long pid = spawn();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        {
            sqlock::Lock inherited = std::move(lock);  // destroyed here, in the child
        }
        _exit(0);
    }
    REQUIRE(sqlock_test::wait_child(static_cast<pid_t>(pid), std::chrono::seconds(30)) == 0);
    CHECK(lock.held());
    auto info = locker.show("parent");
    REQUIRE(info);
    CHECK(info->id == lock.id());
}

}  // namespace

TEST_CASE("a Lock destroyed in a forked child leaves the parent's lock alone", "[ownership]") {
    child_destroys_inherited_lock(
        [] { return sqlock_test::fork_child(sqlock_test::child_work::runs_code); });
}

TEST_CASE("a child made without fork handlers knows it is not its parent", "[ownership]") {
    // _Fork() and a raw clone run no pthread_atfork handlers: the library's
    // cached process id must still be the child's, or the child would take
    // the parent's row for its own (and release it here).
    child_destroys_inherited_lock([] { return syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0); });
}

TEST_CASE("release by owner token refuses another holder's lock", "[ownership]") {
    auto db = fresh_database();
    auto locker = db.open();
    auto lock = locker.lock("tokened");
    auto admin = db.open();
    CHECK_THROWS_AS(admin.release("tokened", "0123456789abcdef0123456789abcdef"), sqlock::error);
    CHECK(lock.held());
    auto released = admin.release("tokened", lock.owner_token());
    REQUIRE(released);
    CHECK(released->id == lock.id());
    CHECK_FALSE(admin.show("tokened"));
}

TEST_CASE("force_release deletes whoever holds the lock and says whose it was", "[ownership]") {
    auto db = fresh_database();
    auto locker = db.open();
    auto lock = locker.lock("forced");
    auto admin = db.open();
    auto was = admin.force_release("forced");
    REQUIRE(was);
    CHECK(was->holder.guid == lock.owner_token());
    CHECK_FALSE(admin.force_release("forced"));
    CHECK_FALSE(lock.held());
}
