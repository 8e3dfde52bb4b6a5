// The calling process's id, without a system call each time.
//
// glibc no longer caches getpid(), and the lock's hot path asks for it
// several times per acquire+release (is this still the process that took
// the lock? is the watchdog this process's? reseed the token generator?):
// 8 system calls per cycle, measured, a few percent of a PostgreSQL cycle
// when 8 processes share 2 cores. The cache lives in a page the kernel
// wipes in every child (MADV_WIPEONFORK), however the child was made: fork
// handlers do not run for every way of making one (_Fork, a raw clone), and
// a child that believed it was its parent would reuse the parent's owner
// token and could take the parent's lock as its own. Without that madvise
// (Linux before 4.14), every call is a getpid().
#pragma once

#include <sys/types.h>

namespace sqlock::detail {

pid_t current_pid() noexcept;

}  // namespace sqlock::detail
