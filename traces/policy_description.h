// One description per level policy (records.h's Policy): its name in traces
// and on command lines, its title, which schemes it fits and the words of
// the error when it does not, how its levels move and which trace columns
// it reads.
//
// Every per-policy rule of the toolkit is built from the one table in
// policy_description.cc: records.h's names, accordion-train's --policy
// choices and checks, the DDP hook's, the trace checks, the analysis' and
// the explorer's comparisons. Code elsewhere asks a description (fits,
// motion, literature_baseline), never compares with a Policy value. A new
// policy is a new row there plus its algorithm (an analysis/ LevelPolicy,
// registered in analysis/policy_algorithms.cc), not cases in parallel
// switches.
//
// Thread-safe: the descriptions are constants built once, on first use
// (a function-local static); every function here may be called from any thread.
#ifndef ACCORDION_TRACES_POLICY_DESCRIPTION_H_
#define ACCORDION_TRACES_POLICY_DESCRIPTION_H_

#include <optional>
#include <string>
#include <vector>

#include "traces/records.h"
#include "traces/scheme_description.h"

namespace accordion {

// How a policy's levels move between a run's two levels, and so which level
// flags it takes and which levels its traces may record.
enum class LevelMotion {
  kFixed,      // one level throughout: --level, and level_low == level_high
  kSwitching,  // low in critical regimes, high outside them: --low, --high
  kHighToLow,  // starts at high and steps towards low only: high <= low
  kLowToHigh,  // starts at low and steps towards high only: low <= high
};

struct PolicyDescription {
  Policy policy;
  const char* name;  // in traces and on command lines: "adaqs"
  // For people (reports, the explorer): "AdaQS". The GUI shows it through
  // QCoreApplication::translate("Policy", title).
  const char* title;
  const char* summary;  // one line for help texts
  // What it does, for people (the explorer's caption, the report): "the
  // batch grows where the LR would decay".
  const char* explanation;
  SchemeSet fits;  // the schemes it may choose levels of
  // Why it needs those schemes, in the fit error: "halves a compression".
  const char* needs;
  LevelMotion motion;
  // Decides by critical regimes (eta, interval; per layer where the scheme
  // allows): the paper's policy, the one the others are compared with.
  bool critical_regimes;
  // An adaptive policy from the literature that Accordion is compared with
  // (BaselinePolicyFor).
  bool literature_baseline;
  // Reads the gradients' moments (epoch_layers.grad_mean_norm, grad_std)
  // and the run's msdr_factor.
  bool reads_gradient_moments;
  // The first trace schema that can carry it.
  int min_schema_version;

  bool one_level() const { return motion == LevelMotion::kFixed; }
  bool reads_moments() const { return reads_gradient_moments; }
  // Records levels between the two ends, not only the ends.
  bool steps() const { return motion == LevelMotion::kHighToLow || motion == LevelMotion::kLowToHigh; }
};

// Every policy, in the order command lines list them.
const std::vector<PolicyDescription>& AllPolicies();
// Throws std::logic_error for a value outside the enum.
const PolicyDescription& DescriptionOf(Policy policy);

// The names of every policy, for --policy's choices.
std::vector<std::string> PolicyNames();
// Those names joined for help and errors: ", " and " or " give
// "static, accordion, adaqs or smith".
std::string JoinPolicyNames(const std::string& separator, const std::string& before_last);

// Every policy with the schemes it needs and its summary, for --policy's
// help: "static: one level throughout (--level); accordion (powersgd, topk
// or batch): ...".
std::string PolicyHelp();

// Why `policy` cannot choose the levels of `scheme` ("" when it can), e.g.
// "policy adaqs halves a compression: it needs the powersgd or topk scheme".
std::string PolicyFitProblem(Policy policy, Scheme scheme);
// The literature baseline compared with Accordion on `scheme`: the first
// literature_baseline policy that fits it (batch: smith; powersgd, topk:
// adaqs), or nullopt when none does (dense).
std::optional<Policy> BaselinePolicyFor(Scheme scheme);

}  // namespace accordion

#endif  // ACCORDION_TRACES_POLICY_DESCRIPTION_H_
