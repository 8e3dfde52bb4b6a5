#include "sqlock/observer.hpp"

namespace sqlock {

const char* to_string(acquire_outcome outcome) noexcept {
    switch (outcome) {
        case acquire_outcome::acquired:
            return "acquired";
        case acquire_outcome::busy:
            return "busy";
        case acquire_outcome::timeout:
            return "timeout";
        case acquire_outcome::failed:
            return "failed";
    }
    return "failed";
}

void LockObserver::on_acquire(const AcquireEvent&) {}
void LockObserver::on_renew(const RenewEvent&) {}
void LockObserver::on_release(const ReleaseEvent&) {}
void LockObserver::on_loss(const LossEvent&) {}

}  // namespace sqlock
