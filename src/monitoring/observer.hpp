// Telling a Locker's LockObserver (sqlock/observer.hpp): one null check
// when none is set; an exception the observer throws stops here.
#pragma once

#include "sqlock/observer.hpp"

namespace sqlock::detail {

template <typename F>
void tell(LockObserver* observer, F&& call) noexcept {
    if (!observer) return;
    try {
        call(*observer);
    } catch (...) {
        // The observer's own failure is not sqlock's (observer.hpp).
    }
}

}  // namespace sqlock::detail
