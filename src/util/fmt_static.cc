// The out-of-line part of fmt that the policy module calls (vformat and the
// error paths), compiled into the statically linked helper: Debian ships
// libfmt only as a shared library.  format-inl.h holds the definitions; the
// explicit instantiations are the ones fmt's headers declare extern.
#include <fmt/format-inl.h>

FMT_BEGIN_NAMESPACE
namespace detail {
template FMT_API void buffer<char>::append(const char*, const char*);
template FMT_API void vformat_to(buffer<char>&, string_view, basic_format_args<FMT_BUFFER_CONTEXT(char)>, locale_ref);
template FMT_API auto thousands_sep_impl(locale_ref) -> thousands_sep_result<char>;
template FMT_API auto decimal_point_impl(locale_ref) -> char;
template FMT_API auto locale_ref::get<std::locale>() const -> std::locale;
template FMT_API locale_ref::locale_ref(const std::locale& loc);
template FMT_API auto dragonbox::to_decimal(float x) noexcept -> dragonbox::decimal_fp<float>;
template FMT_API auto dragonbox::to_decimal(double x) noexcept -> dragonbox::decimal_fp<double>;
}  // namespace detail
FMT_END_NAMESPACE
