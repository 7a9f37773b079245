#!/usr/bin/env python3
"""Self-test of scripts/check_layering.py on the fixture trees of testdata/layering: the bad one
holds each kind of violation (a peer include, an upward include, a forbidden arrow, a folder's
private header included from outside, an undeclared folder, two cycles) and must fail with exactly those lines; the good one must pass."""

import os
import subprocess
import sys
import unittest

SOURCE_DIR = os.environ.get(
    "SOURCE_DIR", os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
SCRIPT = os.path.join(SOURCE_DIR, "scripts", "check_layering.py")
FIXTURES = os.path.join(SOURCE_DIR, "testdata", "layering")


def run(root, *extra):
    return subprocess.run([sys.executable, SCRIPT, "--root", root, *extra],
                          capture_output=True, text=True, check=False)


class CheckLayeringTest(unittest.TestCase):
    def test_bad_tree_fails_with_each_violation(self):
        result = run(os.path.join(FIXTURES, "bad"), "--quiet")
        self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
        self.assertEqual(result.stdout.splitlines(), [
            "src/extra: folder is not in the declared order (LAYERS in scripts/check_layering.py)",
            "src/attribute/x.h:2: attribute must not include collect/c.h "
            "(collect is a peer in the declared order)",
            "src/collect/c.h:2: collect must not include attribute/x.h "
            "(attribute is a peer in the declared order)",
            "src/live/l.cc:2: live must not include fields/field_ids.h "
            "(no stage outside fields/ compares DCGM field ids: use fields/field_roles.h or the "
            "FieldPlan)",
            "src/render/r.h:3: render must not include attribute/x.h "
            "(attribute is a peer in the declared order)",
            "src/util/b.h:2: util must not include render/r.h "
            "(render is above it in the declared order)",
            "cycle in the folder include graph: attribute -> collect -> attribute",
            "cycle in the folder include graph: render -> util -> render",
            "check_layering: 8 violation(s)",
        ])

    def test_bad_tree_prints_the_graph(self):
        result = run(os.path.join(FIXTURES, "bad"))
        self.assertEqual(result.returncode, 1)
        self.assertIn("  collect -> util: 1, attribute: 1\n", result.stdout)
        self.assertIn("  app -> render: 1\n", result.stdout)  # fake_kubelet.h is not in src/

    def test_good_tree_passes(self):
        result = run(os.path.join(FIXTURES, "good"))
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertTrue(result.stdout.endswith("check_layering: ok\n"), result.stdout)
        self.assertIn("  serve -> render: 1\n", result.stdout)  # "s.h" is serve's own

    def test_missing_tree_is_a_usage_error(self):
        self.assertEqual(run(os.path.join(FIXTURES, "no-such-tree")).returncode, 2)


if __name__ == "__main__":
    unittest.main()
