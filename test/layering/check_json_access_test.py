#!/usr/bin/env python3
"""Self-test of scripts/check_json_access.py on trees written to a temporary folder: one file
with each kind of throwing JSON access must fail with exactly those lines; the same reads through
util/json_members.h, writes, comments, strings, tests and files that use no JSON must pass."""

import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

SOURCE_DIR = os.environ.get(
    "SOURCE_DIR", os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
SCRIPT = os.path.join(SOURCE_DIR, "scripts", "check_json_access.py")

BAD = """\
#include <nlohmann/json.hpp>
void F(const nlohmann::json& j, std::optional<int> o) {
  std::string a = j.value("type", "");
  auto b = j.at("x");
  auto c = j["status"]["conditions"];
  int d = j.get<int>() + p->template get<int>();
  auto e = nlohmann::json::parse(text);
  auto f = Json::parse(text, nullptr, true);
  std::string g = j.dump();
  int h = o.value();
  auto i = R"({"a":1})"_json;
  j.get_to(h);
  std::string k = j.dump(-1, ' ', false);
}
"""

GOOD = """\
#include "util/json_members.h"
// j.value("x", 1) and j.dump() in a comment, and "j.at(1)" in a string, are not calls.
/* a block: j["a"] j.get<int>() */
void F(nlohmann::json& out, const Json& j, std::string_view text) {
  const Json* m = util::json::Member(j, "type");
  auto p = m != nullptr ? m->get_ptr<const std::string*>() : nullptr;
  out["a"]["b"] = 1;
  out["c"] = R"(x["y"].value(1))";
  auto doc = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  std::string s = out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string t = util::json::Dump(out);
  long big = 1'000'000;
  char q = '"';
}
"""


def run(root):
    return subprocess.run([sys.executable, SCRIPT, "--root", root],
                          capture_output=True, text=True, check=False)


def tree(files):
    root = tempfile.mkdtemp(prefix="json_access_")
    for path, text in files.items():
        full = os.path.join(root, "src", path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w", encoding="utf-8") as f:
            f.write(textwrap.dedent(text))
    return root


class CheckJsonAccessTest(unittest.TestCase):
    def test_each_throwing_access_is_refused_with_its_line(self):
        result = run(tree({"attribute/bad.cc": BAD}))
        self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
        got = [line.split(": ")[0] + ": " + line.split(": ")[1]
               for line in result.stdout.splitlines()[:-1]]
        self.assertEqual(got, [
            "src/attribute/bad.cc:3: value",
            "src/attribute/bad.cc:4: at",
            "src/attribute/bad.cc:5: subscript",
            "src/attribute/bad.cc:6: get",
            "src/attribute/bad.cc:6: get",
            "src/attribute/bad.cc:7: parse",
            "src/attribute/bad.cc:8: parse",
            "src/attribute/bad.cc:9: dump",
            "src/attribute/bad.cc:10: value",
            "src/attribute/bad.cc:11: literal",
            "src/attribute/bad.cc:12: get",
            "src/attribute/bad.cc:13: dump",
        ])
        self.assertEqual(result.stdout.splitlines()[-1], "check_json_access: 12 violation(s)")

    def test_a_header_that_includes_json_brings_its_includers_in(self):
        result = run(tree({
            "live/uses.h": "#include <nlohmann/json_fwd.hpp>\n",
            "live/user.cc": '#include "live/uses.h"\nint x = o.value();\n',
            "live/other.cc": "int y = o.value();\n",  # no JSON: not checked
        }))
        self.assertEqual(result.returncode, 1)
        self.assertEqual(result.stdout.splitlines(), [
            "src/live/user.cc:2: value: throws (json: a member of another type; optional/Result: "
            "empty): use util/json_members.h, or `*x` after a check",
            "check_json_access: 1 violation(s)",
        ])

    def test_good_reads_tests_fuzzers_and_the_helper_pass(self):
        result = run(tree({
            "attribute/good.cc": GOOD,
            "attribute/good_test.cc": BAD,
            "attribute/good_fuzz.cc": BAD,
            "util/json_members.h": BAD,
        }))
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertEqual(result.stdout, "check_json_access: ok\n")

    def test_missing_tree_is_a_usage_error(self):
        self.assertEqual(run(os.path.join(tempfile.gettempdir(), "no-such-tree-x")).returncode, 2)


if __name__ == "__main__":
    unittest.main()
