#include "traces/policy_description.h"

#include <stdexcept>

#include "common/number_format.h"

namespace accordion {

namespace {

std::vector<PolicyDescription> MakePolicies() {
  using M = LevelMotion;
  // One row per policy, fields in PolicyDescription's order.
  return {
      {Policy::kStatic, /*name=*/"static", /*title=*/"static", /*summary=*/"one level throughout (--level)",
       /*explanation=*/"one level throughout",
       /*fits=*/SchemeSet::kAll, /*needs=*/"keeps one level", M::kFixed, /*critical_regimes=*/false,
       /*literature_baseline=*/false, /*reads_gradient_moments=*/false, /*min_schema_version=*/1},
      {Policy::kAccordion, /*name=*/"accordion", /*title=*/"Accordion",
       /*summary=*/"--low in critical regimes, --high elsewhere (the paper's Algorithm 1)",
       /*explanation=*/"the low level in critical regimes, the high one elsewhere",
       /*fits=*/SchemeSet::kWithLevels, /*needs=*/"chooses levels", M::kSwitching, /*critical_regimes=*/true,
       /*literature_baseline=*/false, /*reads_gradient_moments=*/false, /*min_schema_version=*/1},
      // Guo et al. 2020: the compression halves as the gradients' MSDR falls.
      {Policy::kAdaqs, /*name=*/"adaqs", /*title=*/"AdaQS",
       /*summary=*/"AdaQS: from --high towards --low, the compression halving as the gradients' MSDR falls",
       /*explanation=*/"the compression halves as the gradients' MSDR falls",
       /*fits=*/SchemeSet::kHalvable, /*needs=*/"halves a compression", M::kHighToLow, /*critical_regimes=*/false,
       /*literature_baseline=*/true, /*reads_gradient_moments=*/true, /*min_schema_version=*/4},
      // Smith et al. 2017: the batch grows where the LR would decay.
      {Policy::kSmith, /*name=*/"smith", /*title=*/"Smith et al.",
       /*summary=*/"Smith et al.: from --low towards --high, the batch growing where the LR would decay",
       /*explanation=*/"the batch grows where the LR would decay",
       /*fits=*/SchemeSet::kBatchLevels, /*needs=*/"grows the batch", M::kLowToHigh, /*critical_regimes=*/false,
       /*literature_baseline=*/true, /*reads_gradient_moments=*/false, /*min_schema_version=*/4},
  };
}

}  // namespace

const std::vector<PolicyDescription>& AllPolicies() {
  static const std::vector<PolicyDescription> policies = MakePolicies();
  return policies;
}

const PolicyDescription& DescriptionOf(Policy policy) {
  for (const PolicyDescription& d : AllPolicies()) {
    if (d.policy == policy) return d;
  }
  throw std::logic_error("not a policy");
}

std::vector<std::string> PolicyNames() {
  std::vector<std::string> out;
  for (const PolicyDescription& d : AllPolicies()) out.emplace_back(d.name);
  return out;
}

std::string JoinPolicyNames(const std::string& separator, const std::string& before_last) {
  return JoinWords(PolicyNames(), separator, before_last);
}

std::string PolicyHelp() {
  std::vector<std::string> entries;
  for (const PolicyDescription& d : AllPolicies()) {
    const std::string schemes = d.fits == SchemeSet::kAll ? "" : " (" + JoinSchemeNames(d.fits, ", ", " or ") + ")";
    entries.push_back(d.name + schemes + ": " + d.summary);
  }
  return JoinWords(entries, "; ", "; ");
}

std::string PolicyFitProblem(Policy policy, Scheme scheme) {
  const PolicyDescription& p = DescriptionOf(policy);
  if (InSet(DescriptionOf(scheme), p.fits)) return "";
  return std::string("policy ") + p.name + " " + p.needs + ": it needs the " + JoinSchemeNames(p.fits, ", ", " or ") +
         " scheme, not " + ToString(scheme);
}

std::optional<Policy> BaselinePolicyFor(Scheme scheme) {
  for (const PolicyDescription& d : AllPolicies()) {
    if (d.literature_baseline && PolicyFitProblem(d.policy, scheme).empty()) return d.policy;
  }
  return std::nullopt;
}

}  // namespace accordion
