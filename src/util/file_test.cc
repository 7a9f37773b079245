#include "util/file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace nvmlx::util {
namespace {

namespace fs = std::filesystem;

class ReadBoundedFileTest : public testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "file_test.XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

TEST_F(ReadBoundedFileTest, ReadsARegularFileAndASymlinkToOne) {
  std::ofstream(Path("a")) << "hello\n";
  fs::create_symlink(Path("a"), Path("link"));
  Result<std::string> a = ReadBoundedFile(Path("a"), "test file", 100);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(*a, "hello\n");
  Result<std::string> l = ReadBoundedFile(Path("link"), "test file", 100);
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  EXPECT_EQ(*l, "hello\n");
}

// Each of these used to block or run away somewhere in the daemon (hardening round three): they
// are refused at once, naming the file and what it is.
TEST_F(ReadBoundedFileTest, RefusesAFifoADeviceADirectoryAndAnOversizedFileWithoutBlocking) {
  ASSERT_EQ(::mkfifo(Path("fifo").c_str(), 0600), 0);
  fs::create_symlink("/dev/zero", Path("zero"));
  fs::create_directory(Path("dir"));
  std::ofstream(Path("big")) << std::string(4096, 'x');
  const auto start = std::chrono::steady_clock::now();
  for (const char* name : {"fifo", "zero", "dir", "big"}) {
    Result<std::string> r = ReadBoundedFile(Path(name), "state file", 1024);
    ASSERT_FALSE(r.ok()) << name;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << name;
    EXPECT_NE(r.status().message().find(Path(name) + ": the state file"), std::string::npos)
        << r.status().message();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
  EXPECT_NE(ReadBoundedFile(Path("big"), "state file", 1024)
                .status()
                .message()
                .find("larger than the 1 KiB limit (4096 bytes)"),
            std::string::npos);
  EXPECT_NE(ReadBoundedFile(Path("fifo"), "state file", 1024).status().message().find("FIFO"),
            std::string::npos);
  EXPECT_EQ(ReadBoundedFile(Path("missing"), "state file", 1024).status().code(),
            StatusCode::kNotFound);
}

TEST(SizeTextTest, NamesCapsInTheirUnit) {
  EXPECT_EQ(SizeText(size_t{1} << 20), "1 MiB");
  EXPECT_EQ(SizeText(512 * 1024), "512 KiB");
  EXPECT_EQ(SizeText(100), "100 bytes");
}

}  // namespace
}  // namespace nvmlx::util
