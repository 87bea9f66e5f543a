#include "slicewright/model/interned.h"

#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace slicewright::model {
namespace {

TEST(InternerTest, EqualValuesShareOneNode) {
  Interner<std::string> pool;
  const Interned<std::string> a = pool.Intern(std::string("kube-system"));
  const Interned<std::string> b = pool.Intern(std::string("kube-system"));
  const Interned<std::string> c = pool.Intern(std::string("default"));
  EXPECT_EQ(&a.get(), &b.get());
  EXPECT_NE(&a.get(), &c.get());
  EXPECT_EQ(a, b);
  EXPECT_FALSE(a == c);
  EXPECT_EQ(*a, "kube-system");
  EXPECT_EQ(pool.size(), 2U);
}

TEST(InternerTest, TheEmptyValueNeedsNoNode) {
  Interner<std::string> pool;
  const Interned<std::string> empty = pool.Intern(std::string());
  EXPECT_TRUE(empty.empty());
  EXPECT_EQ(*empty, "");
  EXPECT_EQ(empty, Interned<std::string>());
  EXPECT_EQ(pool.size(), 0U);
}

TEST(InternerTest, SweepFreesValuesNobodyHolds) {
  Interner<std::string> pool;
  Interned<std::string> kept = pool.Intern(std::string("kept"));
  { const Interned<std::string> dropped = pool.Intern(std::string("dropped")); }
  EXPECT_EQ(pool.size(), 2U);
  pool.Sweep();
  EXPECT_EQ(pool.size(), 1U);
  EXPECT_EQ(&pool.Intern(std::string("kept")).get(), &kept.get());
}

TEST(InternerTest, PoolStaysBoundedUnderChurn) {
  Interner<std::string> pool;
  for (int i = 0; i < 100000; ++i) {
    const Interned<std::string> value = pool.Intern("pod-template-hash-" + std::to_string(i));
    EXPECT_EQ(*value, "pod-template-hash-" + std::to_string(i));
  }
  // Automatic sweeps run whenever the pool doubles: dead values never pile up.
  EXPECT_LE(pool.size(), 2048U);
}

TEST(InternerTest, HandlesOutliveThePool) {
  Interned<std::string> survivor;
  {
    Interner<std::string> pool;
    survivor = pool.Intern(std::string("node-1"));
    Interned<std::string> copy = survivor;
    EXPECT_EQ(*copy, "node-1");
  }
  EXPECT_EQ(*survivor, "node-1");
  Interned<std::string> moved = std::move(survivor);
  EXPECT_EQ(*moved, "node-1");
}

TEST(InternerTest, ConcurrentInternAndRelease) {
  Interner<std::string> pool;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&pool, t] {
      for (int i = 0; i < 20000; ++i) {
        const Interned<std::string> value = pool.Intern("v" + std::to_string((i * (t + 1)) % 3000));
        Interned<std::string> copy = value;
        EXPECT_EQ(copy->front(), 'v');
        if (i % 1000 == 0) pool.Sweep();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  pool.Sweep();
  EXPECT_EQ(pool.size(), 0U);
}

}  // namespace
}  // namespace slicewright::model
