// Text — the one module for UTF-8, for showing untrusted text, and for
// finding the passwords in database URLs. Internal (not installed): shared by
// the library, the sqlock command and the fuzzers, so that every message,
// listing and log line follows the same rules.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace sqlock::text {

/// Length in bytes (1 to 4) of the well-formed UTF-8 sequence starting at
/// `text[pos]`, or 0 if the bytes there are not one (overlong forms,
/// surrogates, code points above U+10FFFF and truncated sequences are not).
/// Stores the code point in `*code_point` when given. `pos` must be < size.
std::size_t utf8_sequence_length(const std::string& text, std::size_t pos,
                                 char32_t* code_point = nullptr) noexcept;

/// True if `text` is well-formed UTF-8.
bool is_valid_utf8(const std::string& text) noexcept;

/// `text` safe to show anywhere (a terminal, a log, an error message, a
/// quoted name), by the one rule: well-formed UTF-8 is kept; C0 and C1
/// controls, DEL, the backslash, the single quote and bytes that are not
/// UTF-8 are shown as \xNN. The result is one line of valid UTF-8 that no
/// terminal interprets. At most `max_bytes` bytes of `text` are shown,
/// then "...".
std::string printable(const std::string& text, std::size_t max_bytes = std::string::npos);

/// printable() for a value shown on a line of its own, not inside quotes
/// (a server setting in `sqlock doctor`): the single quote and the backslash
/// are kept as they are, so that a value reads as the server has it
/// (synchronous_standby_names = 'ANY 1 ("n2", "n3")'); controls, DEL and
/// bytes that are not UTF-8 are still shown as \xNN.
std::string printable_value(const std::string& text);

/// [begin, end) byte ranges of the passwords in a database URL, read the way
/// libpq reads them: the userinfo password (`scheme://user:PASSWORD@host`,
/// ending at the first '@') and every `password=` query parameter. For
/// scrubbing a URL in place (e.g. in argv).
std::vector<std::pair<std::size_t, std::size_t>> password_ranges(const std::string& url);

/// True when the URL's userinfo password (as password_ranges() finds it)
/// holds a raw character of `chars`. A raw '/' makes every parser read part
/// of it as the host, port or database (and show it there): such a URL is
/// refused, asking for %2F, before it is parsed.
bool password_holds_raw(const std::string& url, const char* chars);

/// The URL with every password replaced by "***", printable(): safe to
/// print, log or put in an error message.
std::string redact_url(const std::string& url);

/// Decodes %XX escapes; malformed escapes are kept as they are.
std::string percent_decode(const std::string& text);

/// MessageRedactor
///
/// Keeps a database URL's password out of the messages of a client library
/// or server, which may echo parts of the connection string (an "invalid
/// percent-encoded token" repeats the password it choked on). Every text
/// from them passes through here before it reaches an exception.
class MessageRedactor {
  public:
    /// Hides the passwords of `url` (as written and percent-decoded) and the
    /// `extra_secrets` (such as a password from the environment).
    MessageRedactor(const std::string& url, std::vector<std::string> extra_secrets);

    /// `text` with the URL replaced by its redacted form, every secret by
    /// "***" (longest first), and line breaks and runs of blanks folded into
    /// single spaces.
    std::string operator()(const std::string& text) const;

    /// The URL, safe to print.
    const std::string& url() const noexcept { return redacted_url_; }

  private:
    std::string original_url_;
    std::string redacted_url_;
    std::vector<std::string> secrets_;  // longest first
};

}  // namespace sqlock::text
