// fuzz_holder — parse_holder() reads any `locked_by` column, whoever wrote
// it, without throwing (it is noexcept: an escaping exception would end the
// process, which the fuzzer reports); describe_holder() copes with the
// result. Rows sqlock writes itself must read back exactly.
#include <cstddef>
#include <cstdint>
#include <string>

#include "base/owner.hpp"
#include "fuzz_check.hpp"
#include "sqlock/error.hpp"
#include "sqlock/lock_info.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string locked_by(reinterpret_cast<const char*>(data), size);
    sqlock::LockInfo info;
    info.name = "fuzz";
    info.locked_by = locked_by;
    info.holder = sqlock::detail::parse_holder(locked_by);
    try {
        FUZZ_CHECK(!sqlock::describe_holder(info).empty(), locked_by);
    } catch (...) {
        FUZZ_CHECK(false, "describe_holder threw");
    }

    // What sqlock writes, with the input as metadata, parses back to its
    // owner token whatever the metadata holds.
    static const auto own = sqlock::detail::make_owner({});
    FUZZ_CHECK(sqlock::detail::parse_holder(own.locked_by).guid == own.token, own.locked_by);
    if (size <= 512) {
        try {
            auto owner = sqlock::detail::make_owner({{"k", locked_by}, {locked_by, "v"}});
            FUZZ_CHECK(sqlock::detail::parse_holder(owner.locked_by).guid == owner.token,
                       owner.locked_by);
        } catch (const sqlock::error& e) {
            // Metadata that is not UTF-8 is refused, as documented.
            FUZZ_CHECK(e.category() == sqlock::errc::invalid_argument, e.what());
        }
    }
    return 0;
}
