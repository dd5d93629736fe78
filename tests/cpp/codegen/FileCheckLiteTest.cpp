// The golden-file matcher itself: it must accept what matches and reject what does not.
#include "FileCheckLite.h"

#include <gtest/gtest.h>

using ptxjit::codegen::test::fileCheck;

namespace {

const char *kInput = "define void @k(i32 %a) {\n"
                     "entry:\n"
                     "  %0 = add i32 %a, 1\n"
                     "  %1 = mul i32 %0, 2\n"
                     "  ret void\n"
                     "}\n";

TEST(FileCheckLite, MatchesInOrder) {
  EXPECT_TRUE(fileCheck(kInput, "CHECK: define void @k\nCHECK: add i32\nCHECK: ret void").ok);
  EXPECT_FALSE(fileCheck(kInput, "CHECK: ret void\nCHECK: add i32").ok);
  EXPECT_FALSE(fileCheck(kInput, "CHECK: sub i32").ok);
}

TEST(FileCheckLite, Next) {
  EXPECT_TRUE(fileCheck(kInput, "CHECK: add i32\nCHECK-NEXT: mul i32\nCHECK-NEXT: ret").ok);
  EXPECT_FALSE(fileCheck(kInput, "CHECK: entry:\nCHECK-NEXT: mul i32").ok);
}

TEST(FileCheckLite, Same) {
  EXPECT_TRUE(fileCheck(kInput, "CHECK: define\nCHECK-SAME: @k(\nCHECK-SAME: i32 %a").ok);
  EXPECT_FALSE(fileCheck(kInput, "CHECK: define\nCHECK-SAME: mul").ok);
  // SAME continues after the previous match on the line.
  EXPECT_FALSE(fileCheck(kInput, "CHECK: i32 %a\nCHECK-SAME: @k").ok);
}

TEST(FileCheckLite, Not) {
  EXPECT_TRUE(fileCheck(kInput, "CHECK: add\nCHECK-NOT: sdiv\nCHECK: ret").ok);
  EXPECT_FALSE(fileCheck(kInput, "CHECK: entry\nCHECK-NOT: mul\nCHECK: ret").ok);
  // A trailing NOT covers the rest of the input.
  EXPECT_FALSE(fileCheck(kInput, "CHECK: add\nCHECK-NOT: ret void").ok);
  EXPECT_TRUE(fileCheck(kInput, "CHECK: mul\nCHECK-NOT: add").ok);
  // A leading NOT covers everything before the first match.
  EXPECT_FALSE(fileCheck(kInput, "CHECK-NOT: define\nCHECK: ret").ok);
}

TEST(FileCheckLite, Regex) {
  EXPECT_TRUE(fileCheck(kInput, "CHECK: %{{[0-9]+}} = mul i32 %0, {{[0-9]}}").ok);
  EXPECT_FALSE(fileCheck(kInput, "CHECK: %{{[a-z]+}} = mul").ok);
  // Special characters outside {{}} are literal.
  EXPECT_TRUE(fileCheck(kInput, "CHECK: @k(i32 %a) {").ok);
  EXPECT_FALSE(fileCheck(kInput, "CHECK: @k.i32").ok);
}

TEST(FileCheckLite, NoDirectivesIsAnError) { EXPECT_FALSE(fileCheck(kInput, "just text").ok); }

} // namespace
