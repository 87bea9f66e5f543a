#include "slicewright/base/thread_name.h"

#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace slicewright {
namespace {

// What the kernel shows for the calling thread (top -H, perf and gdb read the same), without the
// trailing newline.
std::string CommOfThisThread() {
  const long tid = syscall(SYS_gettid);
  std::ifstream in("/proc/self/task/" + std::to_string(tid) + "/comm");
  std::string comm;
  std::getline(in, comm);
  return comm;
}

// Runs `body` on a thread of its own (so the test binary's main thread keeps its name).
template <typename Body>
void OnNewThread(Body body) {
  std::thread(body).join();
}

TEST(ThreadNameTest, NameReadsBackFromProc) {
  std::string comm;
  std::string current;
  OnNewThread([&] {
    SetCurrentThreadName("eps-w0");
    comm = CommOfThisThread();
    current = CurrentThreadName();
  });
  EXPECT_EQ(comm, "eps-w0");
  EXPECT_EQ(current, "eps-w0");
}

TEST(ThreadNameTest, LongNameIsCutTo15Bytes) {
  std::string comm;
  OnNewThread([&] {
    SetCurrentThreadName("c2-endpointslice-worker-12");
    comm = CommOfThisThread();
  });
  EXPECT_EQ(comm, "c2-endpointslic");
  EXPECT_EQ(comm.size(), kMaxThreadNameBytes);
}

TEST(ThreadNameTest, ExactlyFifteenBytesIsKept) {
  std::string comm;
  OnNewThread([&] {
    SetCurrentThreadName("c8-mirror-w10ab");
    comm = CommOfThisThread();
  });
  EXPECT_EQ(comm, "c8-mirror-w10ab");
}

TEST(ThreadNameTest, EmbeddedNulEndsTheName) {
  std::string comm;
  OnNewThread([&] {
    SetCurrentThreadName(std::string_view("dns\0hidden", 10));
    comm = CommOfThisThread();
  });
  EXPECT_EQ(comm, "dns");
}

// The marker set where a cluster's components start reaches the threads they start, and the
// threads those start in turn.
TEST(ThreadNameTest, MarkerCarriesToThreadsStartedFromMarkedThreads) {
  std::string outer_comm;
  std::string inner_comm;
  std::string inner_full;
  {
    ScopedThreadNameMarker marker("c2-");
    EXPECT_EQ(ThreadNameMarker(), "c2-");
    std::thread outer([&, name = ThreadName("manager")] {
      name.Apply();
      outer_comm = CommOfThisThread();
      const ThreadName inner_name("mcs-im-w0");
      inner_full = inner_name.full();
      std::thread([&, inner_name] {
        inner_name.Apply();
        inner_comm = CommOfThisThread();
      }).join();
    });
    outer.join();
  }
  EXPECT_EQ(outer_comm, "c2-manager");
  EXPECT_EQ(inner_full, "c2-mcs-im-w0");
  EXPECT_EQ(inner_comm, "c2-mcs-im-w0");
  // The scope restored the unmarked default.
  EXPECT_EQ(ThreadNameMarker(), "");
  EXPECT_EQ(ThreadName("api-0").full(), "api-0");
}

TEST(ThreadNameTest, MarkersNest) {
  ScopedThreadNameMarker outer("c1-");
  {
    ScopedThreadNameMarker inner("bk-");
    EXPECT_EQ(ThreadName("api-0").full(), "bk-api-0");
  }
  EXPECT_EQ(ThreadName("api-0").full(), "c1-api-0");
}

}  // namespace
}  // namespace slicewright
