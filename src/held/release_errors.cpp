// The process's handler for releases that fail in destructors
// (sqlock/release_errors.hpp), and the one way the handles report to it.
#include "sqlock/release_errors.hpp"

#include <cstdio>
#include <mutex>

#include "held/held_claim.hpp"

namespace sqlock {
namespace {

std::mutex handler_mutex;
release_error_handler& handler_slot() {
    static release_error_handler handler;
    return handler;
}

void report_release_error(const error& e) noexcept {
    release_error_handler handler;
    {
        std::lock_guard<std::mutex> guard(handler_mutex);
        handler = handler_slot();
    }
    try {
        if (handler)
            handler(e);
        else
            std::fprintf(stderr, "sqlock: release failed (%s): %s\n", to_string(e.category()),
                         e.what());
    } catch (...) {
        // A handler that throws must not escape a destructor.
    }
}

}  // namespace

void detail::release_reporting_failure(const std::function<void()>& release) noexcept {
    try {
        release();
    } catch (const error& e) {
        report_release_error(e);
    } catch (const std::exception& e) {
        report_release_error(error(errc::backend, e.what()));
    } catch (...) {
        report_release_error(error(errc::backend, "unknown failure during release"));
    }
}

release_error_handler set_release_error_handler(release_error_handler handler) {
    std::lock_guard<std::mutex> guard(handler_mutex);
    release_error_handler previous = std::move(handler_slot());
    handler_slot() = std::move(handler);
    return previous;
}

}  // namespace sqlock
