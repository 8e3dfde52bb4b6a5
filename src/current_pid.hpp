// The calling process's id, without a system call each time.
//
// glibc no longer caches getpid(), and the lock's hot path asks for it
// several times per acquire+release (is this still the process that took
// the lock? is the watchdog this process's?): 8 system calls per cycle,
// measured, a few percent of a PostgreSQL cycle when 8 processes share 2
// cores. A fork (pthread_atfork's child handler) forgets the cached value,
// so a child sees its own id.
#pragma once

#include <sys/types.h>

namespace sqlock::detail {

pid_t current_pid() noexcept;

}  // namespace sqlock::detail
