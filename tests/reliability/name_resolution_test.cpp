// A host cut off from its DNS servers: name lookups get no answer at all
// (packets dropped, not refused). getaddrinfo then waits for the resolver's
// own timeouts (here 2 tries of 5 s), which no driver bounds; sqlock must
// give up on the connection by its db_timeout all the same.
//
// Each case runs in a child with a mount namespace of its own, in which
// /etc/resolv.conf names a nameserver that is a UDP socket nobody reads,
// /etc/nsswitch.conf asks the hosts file and DNS only, and /etc/hosts knows
// the test server as "sqlock-db.test", and as "sqlock-multi.test" at ::1
// (where it does not listen) before 127.0.0.1. Needs root (or
// CAP_SYS_ADMIN) for the namespace, and no nscd answering in place of those
// files ([needs:private-resolver]): without either, the test is reported as
// not run.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <fstream>

#include "reliability_support.hpp"

using namespace std::chrono_literals;
using sqlock::errc;
using sqlock_test::fresh_database;

namespace {

// The child's exit codes besides 0.
constexpr int cannot_isolate = 77;  // no mount namespace here
constexpr int no_blackhole = 78;    // the silent nameserver's socket could not be bound

// A loopback address of this process's own, so that suites running at the
// same time do not share the nameserver's port.
std::string blackhole_ip() {
    const unsigned pid = static_cast<unsigned>(::getpid());
    return "127.77." + std::to_string((pid >> 8) & 0xff) + "." + std::to_string(1 + pid % 250);
}

// In this (child) process only: the resolver asks a nameserver that never
// answers. Returns 0, or the exit code saying what could not be done.
int isolate_resolver() {
    if (::unshare(CLONE_NEWNS) != 0) return cannot_isolate;
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return cannot_isolate;
    const std::string dir = sqlock_test::scratch_dir(), ns = blackhole_ip();
    std::ofstream(dir + "/resolv.conf")
        << "nameserver " << ns << "\noptions timeout:5 attempts:2\n";
    std::ofstream(dir + "/nsswitch.conf") << "hosts: files dns\n";
    std::ofstream(dir + "/hosts") << "127.0.0.1 localhost\n127.0.0.1 sqlock-db.test\n"
                                     "::1 sqlock-multi.test\n127.0.0.1 sqlock-multi.test\n";
    for (const char* file : {"resolv.conf", "nsswitch.conf", "hosts"}) {
        const std::string from = dir + "/" + file, to = std::string("/etc/") + file;
        if (::mount(from.c_str(), to.c_str(), nullptr, MS_BIND, nullptr) != 0)
            return cannot_isolate;
    }
    // The nameserver: a bound socket, so queries are taken in and never
    // answered (an unbound port would refuse them at once).
    const int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
    const int yes = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(53);
    ::inet_pton(AF_INET, ns.c_str(), &a.sin_addr);
    if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) return no_blackhole;
    return 0;
}

// What an attempt in an isolated child ended with, carried back to the test
// in shared memory.
struct Attempt {
    int code = -1;        // 0: acquired; 1: threw; else the child's exit code
    char category[32]{};  // of the error thrown
    char message[512]{};
    double seconds = 0;  // from the Locker's making to the outcome
};

// A resolver of the test's own: no nscd (which answers without reading the
// files the children replace), and a mount namespace for each child. Neither
// is something the test command could install: never required.
const sqlock_test::DeclareNeed private_resolver{
    {"private-resolver", [] {
         struct stat st;
         if (::stat("/var/run/nscd/socket", &st) == 0)
             return std::string(
                 "nscd runs here, and answers without reading the files the test "
                 "replaces");
         sqlock_test::Process child = sqlock_test::Process::fork([] {
             const bool isolated =
                 ::unshare(CLONE_NEWNS) == 0 &&
                 ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0;
             return isolated ? 0 : cannot_isolate;
         });
         if (child.finish(30s).code != 0)
             return std::string("no mount namespace here (needs root, or CAP_SYS_ADMIN)");
         return std::string();
     }}};

// Runs `attempt` (make a Locker, try a lock) in an isolated child.
Attempt in_isolation(const std::function<void()>& attempt) {
    reliability::Shared<Attempt> out;
    sqlock_test::Process child = sqlock_test::Process::fork([&] {
        if (const int code = isolate_resolver()) return code;
        const auto start = std::chrono::steady_clock::now();
        try {
            attempt();
            out->code = 0;
        } catch (const sqlock::error& e) {
            out->code = 1;
            std::strncpy(out->category, sqlock::to_string(e.category()), sizeof out->category - 1);
            std::strncpy(out->message, e.what(), sizeof out->message - 1);
        } catch (...) {
            return 3;
        }
        out->seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        return 0;
    });
    const sqlock_test::Outcome end = child.finish(60s);
    REQUIRE_FALSE(end.timed_out);
    const int code = end.code;
    INFO("the child's exit code (78: the silent nameserver could not be bound)");
    REQUIRE((code == 0 || code == cannot_isolate));
    if (code == cannot_isolate) out->code = cannot_isolate;
    return *out;
}

// What sqlock::diagnose() says of the host name lookup, as an error (so
// that in_isolation carries it back to the test).
void diagnose_lookup(const std::string& url, const std::string& table) {
    sqlock::LockerOptions o;
    o.table = table;
    o.db_timeout = 3s;
    sqlock::Locker locker(url, o);
    for (const auto& f : sqlock::diagnose(locker).facts)
        if (f.key == "host name lookup") throw sqlock::error(errc::backend, f.value);
}

// Throws unless a connection to [::1]:`port` fails: the two-address case
// shows the second address is tried only if the first cannot be used.
void require_nothing_on_ipv6_loopback(int port) {
    const int fd = ::socket(AF_INET6, SOCK_STREAM, 0);
    sockaddr_in6 a{};
    a.sin6_family = AF_INET6;
    a.sin6_port = htons(static_cast<std::uint16_t>(port));
    a.sin6_addr = in6addr_loopback;
    const bool connected = fd >= 0 && ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    if (fd >= 0) ::close(fd);
    if (connected)
        throw sqlock::error(errc::backend,
                            "the server listens on ::1 as well: not a test of "
                            "the second address");
}

void try_once(const std::string& url, const std::string& table, sqlock::duration db_timeout) {
    sqlock::LockerOptions o;
    o.table = table;
    o.db_timeout = db_timeout;
    sqlock::Locker locker(url, o);
    auto lock = locker.try_lock("resolved");
    if (!lock) throw sqlock::error(errc::busy, "the lock was held");
    lock->release();
}

}  // namespace

TEST_CASE("a host name the resolver never answers for fails the connection by db_timeout",
          "[faults][dns][needs:server][needs:private-resolver]") {
    // SQLite has no host name to look up.
    const auto db = fresh_database();
    sqlock_test::scratch_dir();  // made here, not in a child that does not clean up
    const std::string password = sqlock_test::password_of(db.url);
    auto url_at = [&](const std::string& host) { return sqlock_test::with_host(db.url, host); };

    // Control: a name the hosts file answers for is looked up, bounded, and
    // connects.
    Attempt known = in_isolation([&] { try_once(url_at("sqlock-db.test"), db.table, 3s); });
    INFO(known.message);
    CHECK(known.code == 0);

    // The doctor says what the name resolved to.
    Attempt doctor = in_isolation([&] { diagnose_lookup(url_at("sqlock-multi.test"), db.table); });
    CHECK(doctor.code == 1);
    CHECK_THAT(doctor.message,
               Catch::Matchers::StartsWith("sqlock-multi.test: ::1, 127.0.0.1 (in "));

    // A name with two addresses, the first refused: both are tried, in order.
    Attempt multi = in_isolation([&] {
        require_nothing_on_ipv6_loopback(sqlock_test::port_of(db.url));
        try_once(url_at("sqlock-multi.test"), db.table, 3s);
    });
    INFO(multi.message);
    CHECK(multi.code == 0);

    // A name only DNS could answer: unbounded, getaddrinfo would take 10 s.
    Attempt stalled = in_isolation([&] { try_once(url_at("sqlock-stalled.test"), db.table, 1s); });
    INFO(stalled.message);
    REQUIRE(stalled.code == 1);
    CHECK(std::string(stalled.category) == "connection");
    CHECK(std::string(stalled.message).find("resolver") != std::string::npos);
    CHECK(stalled.seconds >= 0.9);
    CHECK(stalled.seconds < 4.0);
    if (!password.empty()) CHECK(std::string(stalled.message).find(password) == std::string::npos);

    if (sqlock_test::backend() == "postgres") {
        // A list of hosts (libpq's failover list). One that does not answer
        // is left out once its time is up, and the next one is used...
        const std::string port = ":" + std::to_string(sqlock_test::port_of(db.url));
        Attempt second = in_isolation([&] {
            try_once(url_at("sqlock-stalled.test" + port + ",sqlock-db.test"), db.table, 1s);
        });
        INFO(second.message);
        CHECK(second.code == 0);
        CHECK(second.seconds < 4.0);
        // ...and one after a host that resolved, or after a numeric
        // address, is not waited for...
        for (const char* before : {"sqlock-db.test", "127.0.0.1"}) {
            Attempt first = in_isolation(
                [&] { try_once(url_at(before + port + ",sqlock-stalled.test"), db.table, 3s); });
            INFO(before << ": " << first.message);
            CHECK(first.code == 0);
            CHECK(first.seconds < 1.5);
        }
        // ...unless libpq looks for a primary, and may pass over the first.
        const std::string both = url_at("sqlock-db.test" + port + ",sqlock-stalled.test");
        Attempt primary = in_isolation([&] {
            try_once(both + (both.find('?') == std::string::npos ? "?" : "&") +
                         "target_session_attrs=read-write",
                     db.table, 1s);
        });
        INFO(primary.message);
        CHECK(primary.code == 0);
        CHECK(primary.seconds >= 0.9);
        CHECK(primary.seconds < 4.0);
    }
}
