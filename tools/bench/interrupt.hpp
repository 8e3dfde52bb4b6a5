// Ctrl-C and SIGTERM: stop at the next safe point and still clean up (drop
// the benchmark's tables, remove its files) instead of dying mid-run.
#pragma once

#include <stdexcept>

namespace sqlock_bench {

/// Thrown by check_interrupted() once SIGINT or SIGTERM arrived.
struct interrupted : std::runtime_error {
    interrupted() : std::runtime_error("interrupted") {}
};

/// Installs the handlers (in the parent process only).
void install_interrupt_handlers();

/// Restores the default handlers: forked workers just die on Ctrl-C.
void reset_interrupt_handlers();

/// Throws `interrupted` if a signal arrived.
void check_interrupted();

}  // namespace sqlock_bench
