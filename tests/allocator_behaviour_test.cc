// allocator_behaviour_test.cc — the behaviour suite on the simulated device,
// with classic segments (PyTorch's native policy) and growable ones.
#include "tests/support/allocator_behaviour_suite.h"
#include "tests/support/pool_behaviour_suite.h"

namespace ccalloc::test {
namespace {

using SimConfigs = ::testing::Types<SimClassic, SimGrowable>;
INSTANTIATE_TYPED_TEST_SUITE_P(Sim, AllocatorBehaviourTest, SimConfigs, EnvNames);
INSTANTIATE_TYPED_TEST_SUITE_P(Sim, PoolBehaviourTest, SimConfigs, EnvNames);

}  // namespace
}  // namespace ccalloc::test
