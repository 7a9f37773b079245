#!/usr/bin/env python3
"""Self-test of scripts/check_function_size.py: what it counts as a function and as its length
(on source texts written here), and its report and exit status on small trees."""

import importlib.util
import os
import subprocess
import sys
import tempfile
import unittest

SOURCE_DIR = os.environ.get(
    "SOURCE_DIR", os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
SCRIPT = os.path.join(SOURCE_DIR, "scripts", "check_function_size.py")

_spec = importlib.util.spec_from_file_location("check_function_size", SCRIPT)
cfs = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cfs)


def functions(text):
    """{name: (first line, number of lines)} of a source text."""
    return {name: (first, last - first + 1) for first, last, name in cfs.functions_of(text)}


def body(n):
    """n lines of statements."""
    return "".join(f"  x += {i};\n" for i in range(n))


class WhatCountsTest(unittest.TestCase):
    def test_signature_line_to_closing_brace(self):
        text = ("namespace a {\n"            # 1
                "\n"                         # 2
                "// F does things {\n"       # 3: a comment is not the signature
                "template <typename T>\n"    # 4
                "int F(T x,\n"               # 5
                "      int y) {\n"           # 6
                + body(3) +                  # 7-9
                "}\n"                        # 10
                "void G() {}\n"              # 11
                "}  // namespace a\n")
        self.assertEqual(functions(text), {"F": (4, 7), "G": (11, 1)})

    def test_namespaces_classes_enums_and_data_are_not_functions(self):
        text = ("namespace a::b {\n"
                "namespace {\n"
                "enum class E : int { kA, kB };\n"
                "constexpr int kTable[] = {1, 2, 3};\n"
                "const auto kLambda = [](int v) { return v; };\n"
                "struct S final : Base<int> {\n"
                "  int m{0};\n"
                "  std::function<void()> cb_{[] { Run(); }};\n"
                "  int Get() const { return m; }\n"
                "  S& operator=(const S& o) {\n"
                "    return *this;\n"
                "  }\n"
                "  bool operator==(const S&) const = default;\n"
                "  explicit operator bool() const { return true; }\n"
                " private:\n"
                "  struct Inner {\n"
                "    void Deep() && {}\n"
                "  };\n"
                "};\n"
                "}  // namespace\n"
                "extern \"C\" {\n"
                "int CFunction(void) { return 0; }\n"
                "}\n"
                "}\n")
        self.assertEqual(sorted(functions(text)), [
            "CFunction", "S::Get", "S::Inner::Deep", "S::operator bool", "S::operator="])

    def test_literals_comments_and_preprocessor_hide_their_braces(self):
        text = ("#define OPEN {\n"
                "#define MULTI(x) \\\n"
                "  do { x } while (0)\n"
                "void F() {\n"
                "  const char* s = \"}\";\n"
                "  char c = '}';\n"
                "  char d = '\\'';\n"
                "  int n = 1'000'000;\n"
                "  auto r = R\"x(})\" }\n)x\";\n"
                "  /* } */\n"
                "  // }\n"
                "}\n"
                "#if defined(A)\n"
                "namespace x {\n"
                "#else\n"
                "namespace y {\n"
                "#endif\n"
                "void G() {\n"
                "}\n"
                "}\n")
        self.assertEqual(functions(text), {"F": (4, 10), "G": (19, 2)})

    def test_lambdas_count_in_their_function(self):
        text = ("void F() {\n"
                "  auto f = [&] {\n"
                "    struct Local { void M() {} };\n"
                "  };\n"
                "}\n")
        self.assertEqual(functions(text), {"F": (1, 5)})

    def test_constructor_initializer_list(self):
        text = ("Foo::Foo(int x)\n"
                "    : a_(x),\n"
                "      b_{x, 2},\n"
                "      c_(Make<int>{}),\n"
                "      d_([this] { Tick(); }) {\n"
                "  Start();\n"
                "}\n"
                "Foo::~Foo() { Stop(); }\n"
                "auto Foo::Trailing() const -> std::vector<int> {\n"
                "  return {};\n"
                "}\n")
        self.assertEqual(functions(text), {
            "Foo::Foo": (1, 7), "Foo::~Foo": (8, 1), "Foo::Trailing": (9, 3)})

    def test_annotation_macros(self):
        text = ("void Foo::Locked() NVMLX_REQUIRES(mu_) {\n"
                "}\n"
                "NVMLX_SOMETHING(x)\n"
                "void Bar() {\n"
                "}\n")
        self.assertEqual(functions(text), {"Foo::Locked": (1, 2), "Bar": (4, 2)})

    def test_unbalanced_braces_are_an_error(self):
        with self.assertRaises(ValueError):
            cfs.functions_of("void F() {\n")
        with self.assertRaises(ValueError):
            cfs.functions_of("}\n")


def run(root, *extra):
    # ALLOWED names this repository's functions, not those of the trees written here.
    return subprocess.run([sys.executable, SCRIPT, "--root", root, "--no-allowed", *extra],
                          capture_output=True, text=True, check=False)


def write_tree(root, files):
    for rel, text in files.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)


class TreeTest(unittest.TestCase):
    LONG = "namespace a {\n\nvoid Long() {\n" + body(119) + "}\n\n}\n"  # 121 lines from line 3

    def test_long_function_fails(self):
        with tempfile.TemporaryDirectory() as root:
            write_tree(root, {"src/x/long.cc": self.LONG,
                              "src/x/ok.h": "inline int Ok() { return 1; }\n"})
            result = run(root)
            self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
            self.assertEqual(result.stdout.splitlines()[0], "src/x/long.cc:3 Long 121 lines")
            result = run(root, "--max-lines", "121")
            self.assertEqual(result.returncode, 0, result.stdout + result.stderr)

    def test_tests_are_not_checked(self):
        with tempfile.TemporaryDirectory() as root:
            write_tree(root, {"src/x/long_test.cc": self.LONG, "src/x/long_fuzz.cc": self.LONG,
                              "src/x/long_test_fixture.h": self.LONG,
                              "src/x/test/long.cc": self.LONG,
                              "src/x/ok.cc": "void F() {\n}\n"})
            result = run(root)
            self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
            self.assertIn("check_function_size: ok (1 functions", result.stdout)

    def test_allowed_functions_may_not_grow_and_must_be_removed_once_short(self):
        def check(allowed):
            with open(os.devnull, "w", encoding="utf-8") as out:
                return cfs.check(root, allowed=allowed, out=out)

        with tempfile.TemporaryDirectory() as root:
            write_tree(root, {"src/x/long.cc": self.LONG})
            self.assertEqual(check({("src/x/long.cc", "Long"): 121}), 0)
            self.assertEqual(check({("src/x/long.cc", "Long"): 120}), 1)  # it grew
            self.assertEqual(check({("src/x/long.cc", "Long"): 121,
                                    ("src/x/gone.cc", "Gone"): 130}), 1)  # a stale entry

    def test_unbalanced_file_fails(self):
        with tempfile.TemporaryDirectory() as root:
            write_tree(root, {"src/x/bad.cc": "void F() {\n"})
            result = run(root)
            self.assertEqual(result.returncode, 1)
            self.assertIn("src/x/bad.cc: cannot check: unmatched { at offset 9", result.stdout)

    def test_missing_tree_is_a_usage_error(self):
        with tempfile.TemporaryDirectory() as root:
            self.assertEqual(run(os.path.join(root, "no-such-tree")).returncode, 2)


if __name__ == "__main__":
    unittest.main()
