// allocator_behaviour_gpu_test.cc — the behaviour suite on a real CUDA device,
// with classic and growable segments. Every test skips itself where
// CudaDeviceAvailable() is false; tests that need failure injection or events
// held incomplete skip themselves here (the simulated instantiation runs them).
#include "tests/support/allocator_behaviour_suite.h"
#include "tests/support/pool_behaviour_suite.h"

namespace ccalloc::test {
namespace {

using CudaConfigs = ::testing::Types<CudaClassic, CudaGrowable>;
INSTANTIATE_TYPED_TEST_SUITE_P(Cuda, AllocatorBehaviourTest, CudaConfigs, EnvNames);
INSTANTIATE_TYPED_TEST_SUITE_P(Cuda, PoolBehaviourTest, CudaConfigs, EnvNames);

}  // namespace
}  // namespace ccalloc::test
