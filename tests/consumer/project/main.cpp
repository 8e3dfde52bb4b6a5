// Uses the installed headers and library: take a lock, see it, release it.
#include <sqlock/sqlock.hpp>

#include <cstdio>

int main(int argc, char** argv) {
    if (argc != 2) return 2;
    sqlock::Locker locker(std::string("sqlite://") + argv[1]);
    locker.init();
    auto lock = locker.try_lock("consumer");
    if (!lock || locker.list().size() != 1) return 1;
    std::printf("sqlock %s: held 'consumer' as id %lld\n", SQLOCK_VERSION,
                static_cast<long long>(lock->id()));
    return 0;
}
