// ACCORDION_ARG declares one option of an Options class: its chained setter,
// its getter and its member, on one line with its default.
//
//   class HessianOptions {
//    public:
//     void Validate() const;
//
//     /// Most power iterations. Default: 100.
//     ACCORDION_ARG(int, max_iterations) = 100;
//   };
//
//   HessianOptions().max_iterations(50).max_iterations() == 50
//
// A macro, where the project otherwise writes none, because without it an
// option is written three times (setter, getter, member), its default far
// from its setter; with it one line keeps the four together. It is the
// pattern of LibTorch's TORCH_ARG (torch/arg.h), which LibTorch users know.
// Unlike TORCH_ARG it gives no mutable getter: options change through their
// setters only.
//
// The macro leaves the class in its private section: write the class's
// functions before its options, or open `public:` again after them. T may not
// contain a top-level comma (std::map<K, V>: name it with a `using` first).
#ifndef ACCORDION_COMMON_OPTIONS_H_
#define ACCORDION_COMMON_OPTIONS_H_

// `T const&`, not `const T&`: the macro pastes T as written, and a pointer
// type (`const std::atomic<bool>*`) must become a const reference to the
// pointer, not a reference to a pointer with the const repeated.
#define ACCORDION_ARG(T, name)                       \
 public:                                             \
  auto name(T const& value)->decltype(*this) {       \
    name##_ = value;                                 \
    return *this;                                    \
  }                                                  \
  T const& name() const noexcept { return name##_; } \
                                                     \
 private:                                            \
  T name##_

#endif  // ACCORDION_COMMON_OPTIONS_H_
