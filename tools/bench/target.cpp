#include "target.hpp"

namespace sqlock_bench {
namespace {

// The password of "scheme://user:password@host/..." or "...?password=...".
std::string password_of(const std::string& url) {
    std::size_t scheme = url.find("://");
    if (scheme != std::string::npos) {
        std::size_t start = scheme + 3;
        std::size_t at = url.find('@', start);
        std::size_t slash = url.find('/', start);
        if (at != std::string::npos && (slash == std::string::npos || at < slash)) {
            std::size_t colon = url.find(':', start);
            if (colon != std::string::npos && colon < at)
                return url.substr(colon + 1, at - colon - 1);
        }
    }
    std::size_t p = url.find("password=");
    if (p != std::string::npos) {
        std::size_t end = url.find('&', p);
        return url.substr(p + 9, end == std::string::npos ? std::string::npos : end - p - 9);
    }
    return {};
}

}  // namespace

std::string scrub_password(const std::string& text, const std::string& url) {
    const std::string secret = password_of(url);
    if (secret.empty()) return text;
    std::string out = text;
    std::size_t pos = 0;
    while ((pos = out.find(secret, pos)) != std::string::npos) {
        out.replace(pos, secret.size(), "***");
        pos += 3;
    }
    return out;
}

std::string redact_url(const std::string& url) {
    return scrub_password(url, url);
}

}  // namespace sqlock_bench
