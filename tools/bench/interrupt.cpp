#include "interrupt.hpp"

#include <signal.h>

namespace sqlock_bench {
namespace {

volatile sig_atomic_t signalled = 0;

void on_signal(int) {
    signalled = 1;
}

}  // namespace

void install_interrupt_handlers() {
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
}

void reset_interrupt_handlers() {
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
}

void check_interrupted() {
    if (signalled) throw interrupted();
}

}  // namespace sqlock_bench
