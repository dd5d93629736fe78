// PTXJIT_DUMP's stage list (compiler/Dump.h).
#include "compiler/Dump.h"

#include <gtest/gtest.h>

using ptxjit::compiler::DumpStages;
using ptxjit::compiler::parseDumpStages;

TEST(Dump, StagesAreAnySubsetOrAll) {
  DumpStages none = parseDumpStages("");
  EXPECT_FALSE(none.any());
  DumpStages some = parseDumpStages("typed, ptx");
  EXPECT_TRUE(some.typed && some.ptx);
  EXPECT_FALSE(some.ir || some.llvm);
  DumpStages all = parseDumpStages("all");
  EXPECT_TRUE(all.ir && all.typed && all.llvm && all.ptx);
}

TEST(Dump, UnknownStagesAreNamed) {
  std::string unknown;
  DumpStages s = parseDumpStages("ir,asm,,bogus", &unknown);
  EXPECT_TRUE(s.ir);
  EXPECT_EQ(unknown, "asm,bogus");
  parseDumpStages("llvm", &unknown);
  EXPECT_EQ(unknown, "");
}
