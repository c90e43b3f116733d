// Platforms: specs, files, and what SimGrid builds from them.
#include "simulator/platform.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <simgrid/s4u/Host.hpp>

#include "common/errors.h"
#include "simulator/alpha_beta_model.h"
#include "simulator/child_process.h"
#include "simulator/network_simulation.h"
#include "simulator/platform_builder.h"
#include "simulator/platform_file.h"
#include "simulator/topology_description.h"
#include "tests/simulator/sim_test_support.h"
#include "tests/support/temp_dir_test.h"

namespace accordion::sim {
namespace {

// Builds `spec` in a child; returns the ring route summary and host names in rank order.
nlohmann::json Build(const PlatformSpec& spec, int ranks) {
  return nlohmann::json::parse(RunInChildProcess([&] {
    NetworkSimulation sim(spec, ranks);
    const RouteSummary r = SummariseRingRoutes(sim.hosts());
    nlohmann::json names = nlohmann::json::array();
    for (const auto* h : sim.hosts()) names.push_back(h->get_name());
    return nlohmann::json{{"latency_s", r.latency_s}, {"bandwidth_Bps", r.bandwidth_Bps}, {"hosts", names}}.dump();
  }));
}

using test_support::InputErrorOf;

class PlatformFiles : public accordion::test_support::TempDirTest {
 protected:
  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    return path;
  }
};

TEST(PlatformSpec, RefusesBadValuesWithAReason) {
  EXPECT_NE(InputErrorOf([] {
              StarPlatformOptions().bandwidth_gbps(0).spec().Validate();
            }).find("bandwidth must be a positive"),
            std::string::npos);
  EXPECT_NE(InputErrorOf([] { StarPlatformOptions().bandwidth_gbps(-10).spec().Validate(); }).find("not -10 Gb/s"),
            std::string::npos);
  EXPECT_NE(InputErrorOf([] { RingPlatformOptions().latency_us(-1).spec().Validate(); }).find("latency"),
            std::string::npos);
  EXPECT_NE(
      InputErrorOf([] { HierarchicalPlatformOptions().gpus_per_node(0).spec().Validate(); }).find("gpus per node"),
      std::string::npos);
  EXPECT_NE(InputErrorOf([] {
              StarPlatformOptions().network(NetworkOptions().model("NS3")).spec().Validate();
            }).find("unknown network model 'NS3'"),
            std::string::npos);
  EXPECT_NE(InputErrorOf([] {
              StarPlatformOptions().network(NetworkOptions().tcp_gamma(-1)).spec().Validate();
            }).find("TCP-gamma"),
            std::string::npos);
}

TEST(PlatformSpec, CountsHostsAndRefusesMoreRanksThanHosts) {
  EXPECT_EQ(StarPlatformOptions().spec().HostCount(7), 7);
  EXPECT_EQ(HierarchicalPlatformOptions().gpus_per_node(4).spec().HostCount(10), 12);
  EXPECT_EQ(FatTreePlatformOptions().hosts_per_leaf(8).spec().HostCount(20), 24);
  EXPECT_NE(
      InputErrorOf([] { StarPlatformOptions().hosts(4).spec().HostCount(8); }).find("8 ranks do not fit on 4 hosts"),
      std::string::npos);
}

TEST(PlatformSpec, JsonRoundTripsEveryTopology) {
  const PlatformSpec specs[] = {
      StarPlatformOptions().hosts(16).bandwidth_gbps(25).latency_us(2),
      FatTreePlatformOptions().hosts_per_leaf(8).spines(2).bandwidth_gbps(100),
      HierarchicalPlatformOptions().gpus_per_node(4).intra_bandwidth_gbps(300).intra_latency_us(0.5),
      RingPlatformOptions().network(NetworkOptions::Exact()), XmlPlatform("cluster.xml")};
  for (const PlatformSpec& s : specs) {
    const PlatformSpec back = PlatformFromJson(s.ToJson(), "test");
    EXPECT_EQ(back.ToJson(), s.ToJson());
    EXPECT_EQ(back.Describe(16), s.Describe(16));
  }
}

// Every topology row is what the flags, files and checks are built from:
// its name parses back, and each parameter is read and written through its
// own key, in its own unit, and checked against its own range.
TEST(TopologyDescription, EveryTopologysNameAndParametersRoundTrip) {
  for (const TopologyDescription& d : AllTopologies()) {
    SCOPED_TRACE(d.name);
    EXPECT_EQ(ParseTopology(d.name), d.topology);
    EXPECT_STREQ(ToString(d.topology), d.name);
    EXPECT_EQ(&DescriptionOf(d.topology), &d);
    EXPECT_NE(TopologyNames().find(d.name), std::string::npos);
    for (const TopologyParameter& p : d.parameters) {
      SCOPED_TRACE(p.key);
      PlatformSpec spec;
      spec.topology = d.topology;
      const double value = p.unit == ParameterUnit::kCount ? 3 : 7.5;
      ASSERT_NE(p.get(spec), value) << "pick a value that is not the default";
      p.set(spec, value);
      EXPECT_DOUBLE_EQ(p.get(spec), value);
      const nlohmann::json j = spec.ToJson();
      ASSERT_TRUE(j.contains(p.key));
      EXPECT_DOUBLE_EQ(j.at(p.key).get<double>(), value);
      EXPECT_DOUBLE_EQ(p.get(PlatformFromJson(j, "test")), value);
      EXPECT_NE(p.Help(d.title).find(d.title), std::string::npos);
      // Out of range, in the parameter's words.
      p.set(spec, p.unit == ParameterUnit::kCount ? p.min_count - 1 : -1);
      EXPECT_NE(InputErrorOf([&] { spec.Validate(); }).find(p.what), std::string::npos);
      if (p.unit == ParameterUnit::kCount) {
        p.set(spec, static_cast<double>(p.max_count) + 1);
        EXPECT_NE(InputErrorOf([&] { spec.Validate(); }).find("above the limit"), std::string::npos);
      }
    }
  }
}

TEST(TopologyDescription, NodesGroupRanksOnlyWhereTheTopologyHasNodes) {
  EXPECT_EQ(NodesOf(StarPlatformOptions()).ranks_per_node, 1);
  EXPECT_EQ(NodesOf(XmlPlatform("cluster.xml")).ranks_per_node, 1);
  const NodeLinks nodes = NodesOf(HierarchicalPlatformOptions().gpus_per_node(4).intra_latency_us(2));
  EXPECT_EQ(nodes.ranks_per_node, 4);
  EXPECT_DOUBLE_EQ(nodes.latency_s, 4e-6);  // two device links
}

// The options classes' parameter setters are written through the rows
// (ACCORDION_TOPOLOGY_PARAMETER): each row needs one, and it must reach that
// row's field and no other. A row added without a setter, or a setter whose
// key names no row, fails here.
TEST(TopologyDescription, EveryParameterHasAnOptionsSetterAndGetterThatReachItsRow) {
  struct Accessor {
    Topology topology;
    std::string key;
    std::function<PlatformSpec(double)> set;    // through the options' setter
    std::function<double(double)> set_and_get;  // the options' getter after its setter
  };
  const std::vector<Accessor> accessors = {
      {Topology::kFatTree, "hosts_per_leaf",
       [](double v) { return FatTreePlatformOptions().hosts_per_leaf(static_cast<int>(v)).spec(); },
       [](double v) { return FatTreePlatformOptions().hosts_per_leaf(static_cast<int>(v)).hosts_per_leaf(); }},
      {Topology::kFatTree, "spines",
       [](double v) { return FatTreePlatformOptions().spines(static_cast<int>(v)).spec(); },
       [](double v) { return FatTreePlatformOptions().spines(static_cast<int>(v)).spines(); }},
      {Topology::kHierarchical, "gpus_per_node",
       [](double v) { return HierarchicalPlatformOptions().gpus_per_node(static_cast<int>(v)).spec(); },
       [](double v) { return HierarchicalPlatformOptions().gpus_per_node(static_cast<int>(v)).gpus_per_node(); }},
      {Topology::kHierarchical, "intra_bandwidth_gbps",
       [](double v) { return HierarchicalPlatformOptions().intra_bandwidth_gbps(v).spec(); },
       [](double v) { return HierarchicalPlatformOptions().intra_bandwidth_gbps(v).intra_bandwidth_gbps(); }},
      {Topology::kHierarchical, "intra_latency_us",
       [](double v) { return HierarchicalPlatformOptions().intra_latency_us(v).spec(); },
       [](double v) { return HierarchicalPlatformOptions().intra_latency_us(v).intra_latency_us(); }},
  };
  size_t rows = 0;
  for (const TopologyDescription& d : AllTopologies()) {
    for (const TopologyParameter& p : d.parameters) {
      ++rows;
      SCOPED_TRACE(std::string(d.name) + " " + p.key);
      const auto a = std::find_if(accessors.begin(), accessors.end(),
                                  [&](const Accessor& x) { return x.topology == d.topology && x.key == p.key; });
      ASSERT_NE(a, accessors.end()) << "no options setter for this row";
      const double value = p.get(PlatformSpec()) + 3;
      const PlatformSpec spec = a->set(value);
      EXPECT_EQ(spec.topology, d.topology);
      EXPECT_DOUBLE_EQ(p.get(spec), value);
      EXPECT_DOUBLE_EQ(a->set_and_get(value), value);
      for (const TopologyDescription& other : AllTopologies()) {
        for (const TopologyParameter& q : other.parameters) {
          if (&q == &p) continue;
          EXPECT_DOUBLE_EQ(q.get(spec), q.get(PlatformSpec())) << "the setter also moved " << q.key;
        }
      }
    }
  }
  EXPECT_EQ(rows, accessors.size()) << "a setter for a parameter no row has";
}

TEST_F(PlatformFiles, BadFilesSayWhatIsWrong) {
  EXPECT_NE(InputErrorOf([&] { LoadPlatformFile(Write("a.json", "{\"topology\": \"star\",")); }).find("not valid JSON"),
            std::string::npos);
  EXPECT_NE(InputErrorOf([&] {
              LoadPlatformFile(Write("b.json", "{\"topology\": \"torus\"}"));
            }).find("unknown topology 'torus'"),
            std::string::npos);
  EXPECT_NE(InputErrorOf([&] {
              LoadPlatformFile(Write("c.json", "{\"topology\": \"star\", \"bandwith_gbps\": 10}"));
            }).find("unknown key 'bandwith_gbps'"),
            std::string::npos);
  EXPECT_NE(InputErrorOf([&] {
              LoadPlatformFile(Write("d.json", "{\"topology\": \"star\", \"bandwidth_gbps\": \"10\"}"));
            }).find("must be a number"),
            std::string::npos);
  EXPECT_NE(InputErrorOf([&] {
              LoadPlatformFile(Write("e.json", "{\"topology\": \"star\", \"bandwidth_gbps\": 0}"));
            }).find("bandwidth must be a positive"),
            std::string::npos);
  EXPECT_NE(InputErrorOf([&] { LoadPlatformFile(Write("f.json", "[1, 2]")); }).find("expected a JSON object"),
            std::string::npos);
  EXPECT_NE(InputErrorOf([&] { LoadPlatformFile(dir_ + "/missing.json"); }).find("cannot open"), std::string::npos);
}

TEST(BuiltPlatforms, RingRoutesCrossTheLinksEachTopologyPromises) {
  const double lat = 3e-6, bw = 25e9 / 8;
  const nlohmann::json star = Build(StarPlatformOptions().bandwidth_gbps(25).latency_us(3), 6);
  EXPECT_NEAR(star["latency_s"].get<double>(), 2 * lat, 1e-15);
  EXPECT_DOUBLE_EQ(star["bandwidth_Bps"].get<double>(), bw);
  EXPECT_EQ(star["hosts"].size(), 6u);

  // Neighbours 3 and 4 sit in different leaves: up to the spine and down.
  const nlohmann::json tree = Build(FatTreePlatformOptions().hosts_per_leaf(4).bandwidth_gbps(25).latency_us(3), 8);
  EXPECT_NEAR(tree["latency_s"].get<double>(), 4 * lat, 1e-15);

  // Across nodes: device link, NIC, NIC, device link; the NIC is the bottleneck.
  const nlohmann::json hier = Build(HierarchicalPlatformOptions()
                                        .gpus_per_node(4)
                                        .bandwidth_gbps(25)
                                        .latency_us(3)
                                        .intra_bandwidth_gbps(400)
                                        .intra_latency_us(1),
                                    8);
  EXPECT_NEAR(hier["latency_s"].get<double>(), 2 * lat + 2 * 1e-6, 1e-15);
  EXPECT_DOUBLE_EQ(hier["bandwidth_Bps"].get<double>(), bw);
  EXPECT_EQ(hier["hosts"][4], "node-1-gpu-0");

  const nlohmann::json ring = Build(RingPlatformOptions().bandwidth_gbps(25).latency_us(3), 5);
  EXPECT_NEAR(ring["latency_s"].get<double>(), lat, 1e-15);
}

constexpr const char* kXmlHead =
    "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
    "<platform version=\"4.1\">\n";

TEST_F(PlatformFiles, XmlPlatformsPlaceRanksInNaturalHostOrder) {
  const std::string xml = Write("c.xml", std::string(kXmlHead) +
                                             "<zone id=\"z\" routing=\"Full\">\n"
                                             "<host id=\"h10\" speed=\"1Gf\"/><host id=\"h2\" speed=\"1Gf\"/>"
                                             "<host id=\"h1\" speed=\"1Gf\"/>\n"
                                             "<link id=\"l\" bandwidth=\"1GBps\" latency=\"10us\"/>\n"
                                             "<route src=\"h1\" dst=\"h2\"><link_ctn id=\"l\"/></route>\n"
                                             "<route src=\"h2\" dst=\"h10\"><link_ctn id=\"l\"/></route>\n"
                                             "<route src=\"h10\" dst=\"h1\"><link_ctn id=\"l\"/></route>\n"
                                             "</zone></platform>\n");
  const nlohmann::json built = Build(LoadPlatformFile(xml), 3);
  EXPECT_EQ(built["hosts"], nlohmann::json({"h1", "h2", "h10"}));
  EXPECT_NEAR(built["latency_s"].get<double>(), 10e-6, 1e-15);
  EXPECT_NE(InputErrorOf([&] { Build(LoadPlatformFile(xml), 4); }).find("4 ranks do not fit on the 3 hosts"),
            std::string::npos);
  // A platform JSON naming it by a relative path: the JSON's own folder, not
  // the tool's working directory (which is elsewhere here).
  const std::string json = Write("c.json", "{\"xml\": \"c.xml\"}");
  ASSERT_NE(std::filesystem::current_path(), std::filesystem::path(dir_));
  EXPECT_EQ(LoadPlatformFile(json).xml_path, dir_ + "/c.xml");
  EXPECT_EQ(Build(LoadPlatformFile(json), 3)["hosts"], nlohmann::json({"h1", "h2", "h10"}));
}

TEST_F(PlatformFiles, BadXmlIsAnInputError) {
  const std::string broken =
      Write("broken.xml", std::string(kXmlHead) + "<zone id=\"z\" routing=\"Full\"><host id=\"a\"\n");
  EXPECT_NE(InputErrorOf([&] { Build(LoadPlatformFile(broken), 1); }).find("Parse error"), std::string::npos);
  const std::string negative =
      Write("negative.xml", std::string(kXmlHead) +
                                "<zone id=\"z\" routing=\"Full\"><host id=\"a\" speed=\"1Gf\"/>"
                                "<host id=\"b\" speed=\"1Gf\"/><link id=\"l\" bandwidth=\"-1Gbps\" latency=\"1us\"/>"
                                "<route src=\"a\" dst=\"b\"><link_ctn id=\"l\"/></route></zone></platform>\n");
  EXPECT_NE(InputErrorOf([&] { Build(LoadPlatformFile(negative), 2); }).find("link 'l' bandwidth must be"),
            std::string::npos);
  // Beyond the plausibility limits every rate flag has: 1e308 Gb/s overflows
  // to infinity in SimGrid, whose solver then aborts; 20 s of latency.
  for (const auto& [attributes, words] :
       {std::pair{"bandwidth=\"1e308Gbps\" latency=\"1us\"",
                  "link 'l' bandwidth must be a positive number, not inf Gb/s"},
        std::pair{"bandwidth=\"1Gbps\" latency=\"20s\"", "link 'l' latency must be at most 1e+07 us"}}) {
    const std::string huge = Write(
        "huge.xml", std::string(kXmlHead) +
                        "<zone id=\"z\" routing=\"Full\"><host id=\"a\" speed=\"1Gf\"/>"
                        "<host id=\"b\" speed=\"1Gf\"/><link id=\"l\" " +
                        attributes + "/><route src=\"a\" dst=\"b\"><link_ctn id=\"l\"/></route></zone></platform>\n");
    const std::string said = InputErrorOf([&] { Build(LoadPlatformFile(huge), 2); });
    EXPECT_NE(said.find(words), std::string::npos) << said;
  }
}

TEST(XmlClusterHosts, CountsEveryRadicalAsSimGridReadsItsNumbers) {
  EXPECT_EQ(XmlClusterHostsDeclared("<platform/>"), 0);
  EXPECT_EQ(XmlClusterHostsDeclared(R"(<cluster id="a" radical="0-99"/>)"), 100);
  EXPECT_EQ(XmlClusterHostsDeclared(R"(<cluster radical = '1,3,5-7'/><cluster radical="10-19"/>)"), 15);
  // SimGrid reads a number's leading digits: "79204Gf" is 79204.
  EXPECT_EQ(XmlClusterHostsDeclared(R"(<cluster radical="5-79204Gf"/>)"), 79200);
  // A backwards range, an attribute never closed, or no '=': no hosts.
  EXPECT_EQ(XmlClusterHostsDeclared(R"(<cluster radical="9-1"/>)"), 0);
  EXPECT_EQ(XmlClusterHostsDeclared(R"(<cluster radical="0-99)"), 0);
  EXPECT_EQ(XmlClusterHostsDeclared(R"(<cluster radical 0-99/>)"), 0);
  // Saturates instead of overflowing.
  EXPECT_EQ(XmlClusterHostsDeclared(R"(<cluster radical="0-9223372036854775806"/><cluster radical="0-9"/>)"),
            int64_t{1} << 40);
  // Ranges wider than int64_t holds (strtoll stops at its limits): found by
  // the XML fuzzer as a signed overflow.
  EXPECT_EQ(XmlClusterHostsDeclared(R"(<cluster radical="0-9999999999999999999Gf"/>)"), int64_t{1} << 40);
  EXPECT_EQ(XmlClusterHostsDeclared(R"(<cluster radical="-9223372036854775808-9223372036854775807"/>)"),
            int64_t{1} << 40);
}

// Calibrated segments reach SimGrid as factors: a message in segment k sees
// segment k's latency and bandwidth, end to end.
TEST(BuiltPlatforms, SegmentsGiveEachMessageSizeItsLatencyAndBandwidth) {
  PlatformSpec spec = test_support::ExactStar(8, 10, 20);  // 40 us route: the largest segment latency
  spec.segments = {{0, 40e-6, 2e8}, {65536, 25e-6, 1.25e9}};
  const AlphaBetaModel model(spec.segments);
  for (int64_t bytes : {int64_t{8} * 4096, int64_t{8} << 20}) {  // 4 KiB and 1 MiB messages
    const double simulated = test_support::SimulateCollective(spec, 8, CollectiveOp::kAllReduce,
                                                              AllReduceAlgorithm::kRing, bytes, Fidelity::kFull);
    EXPECT_NEAR(simulated / model.Time(CollectiveOp::kAllReduce, AllReduceAlgorithm::kRing, bytes, 8), 1.0, 0.01)
        << bytes;
  }
}

}  // namespace
}  // namespace accordion::sim
