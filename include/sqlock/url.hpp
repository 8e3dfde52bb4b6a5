// Database URLs: hiding their passwords.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace sqlock {

/// [begin, end) byte ranges of the passwords in a database URL, read the way
/// libpq reads them: the userinfo password (`scheme://user:PASSWORD@host`,
/// ending at the first '@') and every `password=` query parameter. For
/// scrubbing a URL in place (e.g. in argv).
std::vector<std::pair<std::size_t, std::size_t>> password_ranges(const std::string& url);

/// The URL with every password replaced by "***" and control characters
/// shown as \xNN: safe to print, log or put in an error message.
std::string redact_url(const std::string& url);

}  // namespace sqlock
