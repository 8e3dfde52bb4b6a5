// A host cut off from its DNS servers: name lookups get no answer at all
// (packets dropped, not refused). getaddrinfo then waits for the resolver's
// own timeouts (here 2 tries of 5 s), which no driver bounds; sqlock must
// give up on the connection by its db_timeout all the same.
//
// Each case runs in a child with a mount namespace of its own, in which
// /etc/resolv.conf names a nameserver that is a UDP socket nobody reads,
// and /etc/hosts names the test server "sqlock-db.test". Needs root (or
// CAP_SYS_ADMIN) for the namespace: without it the test says so and checks
// nothing.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstring>
#include <fstream>

#include "reliability_support.hpp"

using namespace std::chrono_literals;
using sqlock::errc;
using sqlock_test::fresh_database;

namespace {

constexpr const char* blackhole_ip = "127.0.0.77";
constexpr int cannot_isolate = 77;  // the child's exit code: no namespace here

// `url` with its host replaced by `host` ("scheme://user:pw@HOST:port/...").
std::string with_host(const std::string& url, const std::string& host) {
    const auto at = url.rfind('@');
    const auto start = at == std::string::npos ? url.find("//") + 2 : at + 1;
    const auto end = url.find_first_of(":/", start);
    return url.substr(0, start) + host + url.substr(end);
}

// In this (child) process only: the resolver asks a nameserver that never
// answers, and /etc/hosts knows the test server as "sqlock-db.test". False
// when this process may not have a mount namespace of its own.
bool isolate_resolver() {
    if (::unshare(CLONE_NEWNS) != 0) return false;
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return false;
    const std::string dir = sqlock_test::scratch_dir();
    std::ofstream(dir + "/resolv.conf")
        << "nameserver " << blackhole_ip << "\noptions timeout:5 attempts:2\n";
    std::ofstream(dir + "/hosts") << "127.0.0.1 localhost\n127.0.0.1 sqlock-db.test\n";
    for (const char* file : {"resolv.conf", "hosts"}) {
        const std::string from = dir + "/" + file, to = std::string("/etc/") + file;
        if (::mount(from.c_str(), to.c_str(), nullptr, MS_BIND, nullptr) != 0) return false;
    }
    // The nameserver: a bound socket, so queries are taken in and never
    // answered (an unbound port would refuse them at once).
    const int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(53);
    ::inet_pton(AF_INET, blackhole_ip, &a.sin_addr);
    return fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
}

struct Outcome {
    int code = -1;        // 0: acquired; 1: threw; cannot_isolate; else the child died
    char category[32]{};  // of the error thrown
    char message[512]{};
    double seconds = 0;  // from the Locker's making to the outcome
};

// Runs `attempt` (make a Locker, try a lock) in an isolated child.
Outcome in_isolation(const std::function<void()>& attempt) {
    reliability::Shared<Outcome> out;
    const pid_t pid = sqlock_test::fork_child(sqlock_test::child_work::runs_code);
    if (pid == 0) {
        if (!isolate_resolver()) ::_exit(cannot_isolate);
        const auto start = std::chrono::steady_clock::now();
        try {
            attempt();
            out->code = 0;
        } catch (const sqlock::error& e) {
            out->code = 1;
            std::strncpy(out->category, sqlock::to_string(e.category()), sizeof out->category - 1);
            std::strncpy(out->message, e.what(), sizeof out->message - 1);
        }
        out->seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        ::_exit(0);
    }
    const auto code = sqlock_test::wait_child(pid, 60s);
    REQUIRE(code.has_value());
    if (*code == cannot_isolate) {
        out->code = cannot_isolate;
    } else {
        REQUIRE(*code == 0);
    }
    return *out;
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
          "[faults][dns]") {
    if (!sqlock_test::is_server_backend()) {
        SUCCEED("server backends only: SQLite has no host name to look up");
        return;
    }
    const auto db = fresh_database();
    sqlock_test::scratch_dir();  // made here, not in a child that does not clean up
    const std::string password = reliability::password_of(db.url);

    // Control: a name the hosts file answers for is looked up, bounded, and
    // connects.
    Outcome known =
        in_isolation([&] { try_once(with_host(db.url, "sqlock-db.test"), db.table, 2s); });
    if (known.code == cannot_isolate) {
        // Not a tool the test command could install: a container without
        // CAP_SYS_ADMIN. Said, not failed (and not skip_test(), which would
        // mark every other test of the suite as not run).
        WARN("not checked: no mount namespace here (needs root, or CAP_SYS_ADMIN)");
        return;
    }
    INFO(known.message);
    CHECK(known.code == 0);

    // A name only DNS could answer: unbounded, getaddrinfo would take 10 s.
    Outcome stalled =
        in_isolation([&] { try_once(with_host(db.url, "sqlock-stalled.test"), db.table, 1s); });
    INFO(stalled.message);
    REQUIRE(stalled.code == 1);
    CHECK(std::string(stalled.category) == "connection");
    CHECK(std::string(stalled.message).find("sqlock-stalled.test") != std::string::npos);
    CHECK(stalled.seconds >= 0.9);
    CHECK(stalled.seconds < 4.0);
    if (!password.empty()) CHECK(std::string(stalled.message).find(password) == std::string::npos);

    if (sqlock_test::backend() == "postgres") {
        // Several hosts (libpq's failover list): one that does not answer is
        // left out once its time is up, and the next one is used.
        const std::string port = db.url.substr(db.url.find(':', db.url.rfind('@')) + 1);
        const std::string both = with_host(
            db.url, "sqlock-stalled.test:" + port.substr(0, port.find('/')) + ",sqlock-db.test");
        Outcome next = in_isolation([&] { try_once(both, db.table, 1s); });
        INFO(next.message);
        CHECK(next.code == 0);
        CHECK(next.seconds < 4.0);
    }
}
