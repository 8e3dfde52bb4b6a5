// Redactor — keeps the password out of every message sqlock produces.
//
// libpq and the server may echo parts of the connection string in their
// messages, so every text that came from them passes through here before it
// reaches an exception: text::MessageRedactor, which also hides PGPASSWORD.
#pragma once

#include <string>
#include <vector>

#include "loading/url.hpp"
#include "text.hpp"

namespace sqlock::detail::postgres {

class Redactor : public text::MessageRedactor {
  public:
    /// Hides the password(s) found in `url`, $PGPASSWORD and the
    /// `extra_secrets` (such as the password as libpq decoded it).
    Redactor(const DatabaseUrl& url, std::vector<std::string> extra_secrets);
};

}  // namespace sqlock::detail::postgres
