// reliability_helper — runs sqlock operations in a process of its own, for
// tests that need a different environment than the test binary's: a clock
// skewed by libfaketime, a different user, a process to kill.
//
//   reliability_helper URL TABLE COMMAND [ARGS...]
//
//   hold NAME LEASE_MS   take NAME, print the row, hold it until stdin closes
//                        (or a line arrives), then release; prints "released"
//   try NAME LEASE_MS    try to take NAME and release it at once
//   show NAME            the row of NAME as this process sees it
//   list                 every row with its time left
//   purge                Locker::purge_expired(); prints how many
//   renew NAME LEASE_MS  take NAME, renew it, check held(), release
//   clock                this process's idea of the time (UTC, from libc)
//   init                 Locker::init()
//
// Output is one "key=value ..." line per result; a sqlock::error prints
// "error category=CATEGORY message=..." and exits 1.
#include <chrono>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <string>

#include "sqlock/sqlock.hpp"

namespace {

using namespace std::chrono_literals;

std::string row_text(const sqlock::LockInfo& info) {
    char left[64];
    std::snprintf(left, sizeof left, "%.3f", info.seconds_left);
    return "id=" + std::to_string(info.id) + " name=" + info.name + " left=" + left +
           " expired=" + (info.expired() ? "1" : "0") + " created=" + info.created +
           " expires=" + info.expires;
}

std::string lock_text(sqlock::Locker& locker, const sqlock::Lock& lock) {
    auto row = locker.show(lock.lockstring());
    return "acquired " + (row ? row_text(*row) : "id=" + std::to_string(lock.id()) + " row=none");
}

int usage() {
    std::fprintf(stderr, "usage: reliability_helper URL TABLE COMMAND [ARGS...]\n");
    return 64;
}

int run(int argc, char** argv) {
    if (argc < 4) return usage();
    const std::string url = argv[1], table = argv[2], command = argv[3];
    auto arg = [&](int i) -> std::string { return i < argc ? argv[i] : ""; };
    // A lease of ARGS[i] milliseconds.
    auto lease = [&](int i) {
        sqlock::LockOptions options;
        options.expires = std::chrono::milliseconds(std::stoll(arg(i)));
        return options;
    };
    sqlock::LockerOptions options;
    options.table = table;
    sqlock::Locker locker(url, options);

    if (command == "hold") {
        auto lock = locker.try_lock(arg(4), lease(5));
        if (!lock) {
            std::cout << "held" << std::endl;
            return 0;
        }
        std::cout << lock_text(locker, *lock) << std::endl;
        std::string line;
        std::getline(std::cin, line);
        lock->release();
        std::cout << "released" << std::endl;
    } else if (command == "try") {
        auto lock = locker.try_lock(arg(4), lease(5));
        if (lock) {
            std::cout << lock_text(locker, *lock) << std::endl;
            lock->release();
        } else {
            auto row = locker.show(arg(4));
            std::cout << "held " << (row ? row_text(*row) : "row=none") << std::endl;
        }
    } else if (command == "show") {
        auto row = locker.show(arg(4));
        std::cout << (row ? "row " + row_text(*row) : "none") << std::endl;
    } else if (command == "list") {
        for (const auto& row : locker.list()) std::cout << "row " << row_text(row) << "\n";
        std::cout << "end" << std::endl;
    } else if (command == "purge") {
        std::cout << "purged=" << locker.purge_expired() << std::endl;
    } else if (command == "renew") {
        auto lock = locker.lock(arg(4), lease(5));
        lock.renew();
        std::cout << "renewed held=" << (lock.held() ? 1 : 0) << " "
                  << row_text(*locker.show(arg(4))) << std::endl;
        lock.release();
    } else if (command == "clock") {
        std::time_t now = std::time(nullptr);
        char text[64];
        std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S", std::gmtime(&now));
        std::cout << "clock=" << text << std::endl;
    } else if (command == "init") {
        locker.init();
        std::cout << "initialised" << std::endl;
    } else {
        return usage();
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        return run(argc, argv);
    } catch (const sqlock::error& e) {
        std::cout << "error category=" << sqlock::to_string(e.category()) << " message=" << e.what()
                  << std::endl;
        return 1;
    } catch (const std::exception& e) {
        std::cout << "error category=other message=" << e.what() << std::endl;
        return 2;
    }
}
