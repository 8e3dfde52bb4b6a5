#include "sqlock/error.hpp"

namespace sqlock {

const char* to_string(errc category) noexcept {
    switch (category) {
        case errc::busy:
            return "busy";
        case errc::timeout:
            return "timeout";
        case errc::lost:
            return "lost";
        case errc::connection:
            return "connection";
        case errc::configuration:
            return "configuration";
        case errc::invalid_argument:
            return "invalid_argument";
        case errc::backend:
            return "backend";
    }
    return "unknown";
}

error::error(errc category, const std::string& message, std::string backend_code)
    : std::runtime_error(message), category_(category), backend_code_(std::move(backend_code)) {}

error::error(errc category, const std::string& message, LockInfo holder)
    : std::runtime_error(message),
      category_(category),
      holder_(std::make_shared<const LockInfo>(std::move(holder))) {}

error error::read_only_database(const std::string& message, std::string backend_code) {
    error e(errc::configuration, message, std::move(backend_code));
    e.read_only_ = true;
    return e;
}

}  // namespace sqlock
