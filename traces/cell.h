// Cell: one value of a trace table as stored - NULL, integer, real or text.
// Used where code walks tables generically (exporters).
//
// Thread safety: a plain value; safe to read from several threads at once.
#ifndef ACCORDION_TRACES_CELL_H_
#define ACCORDION_TRACES_CELL_H_

#include <cstdint>
#include <string>
#include <variant>

namespace accordion {

using Cell = std::variant<std::monostate, int64_t, double, std::string>;

}  // namespace accordion

#endif  // ACCORDION_TRACES_CELL_H_
