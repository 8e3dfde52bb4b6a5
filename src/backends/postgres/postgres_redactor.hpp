// Redactor — keeps the password out of every message sqlock produces.
//
// libpq and the server may echo parts of the connection string in their
// messages (an "invalid percent-encoded token" repeats the password it choked
// on, for example), so every text that came from them passes through here
// before it reaches an exception.
#pragma once

#include <string>
#include <vector>

#include "url.hpp"

namespace sqlock::detail::postgres {

class Redactor {
  public:
    /// Hides the password(s) found in `url` and the `extra_secrets` (such as
    /// the password as libpq decoded it).
    Redactor(const DatabaseUrl& url, const std::vector<std::string>& extra_secrets);

    /// `text` with the URL replaced by its redacted form, every occurrence of
    /// the password (as written, and percent-decoded) replaced by "***", and
    /// line breaks and runs of blanks folded into single spaces.
    std::string operator()(const std::string& text) const;

    /// The URL, safe to print.
    const std::string& url() const noexcept { return redacted_url_; }

  private:
    std::string original_url_;
    std::string redacted_url_;
    std::vector<std::string> secrets_;  // longest first
};

/// Decodes %XX escapes; malformed escapes are kept as they are.
std::string percent_decode(const std::string& text);

}  // namespace sqlock::detail::postgres
