#!/usr/bin/env python3
"""Self-test of scripts/check_unity_names.py on small trees: a helper defined in two files of a
folder is refused, the same name in two folders or in a test file is not, and an alias repeated
line for line is allowed."""
import os
import subprocess
import sys
import tempfile

SCRIPT = os.path.join(os.environ.get("SOURCE_DIR", os.path.join(os.path.dirname(__file__), "../..")),
                      "scripts/check_unity_names.py")


def run(files):
    with tempfile.TemporaryDirectory() as root:
        for path, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(root, path)), exist_ok=True)
            with open(os.path.join(root, path), "w") as f:
                f.write(text)
        r = subprocess.run([sys.executable, SCRIPT, "--root", root], capture_output=True, text=True)
        return r.returncode, r.stdout


def main():
    helper = "namespace {\nvoid AppendInt(long v, std::string* out) {\n}\n}  // namespace\n"
    failures = []
    rc, out = run({"src/render/a.cc": helper, "src/render/b.cc": helper})
    if rc != 1 or "AppendInt: src/render/a.cc:2, src/render/b.cc:2" not in out:
        failures.append(f"a helper in two files of one folder: rc={rc} out={out!r}")
    rc, out = run({"src/render/a.cc": "namespace {\nconstexpr double kMiB = 1.0;\n}  // namespace\n",
                   "src/render/b.cc": "static constexpr unsigned kMiB = 1;\n"})
    if rc != 1 or "kMiB" not in out:
        failures.append(f"a constant in two files: rc={rc} out={out!r}")
    rc, out = run({"src/render/a.cc": helper, "src/serve/b.cc": helper,
                   "src/render/a_test.cc": helper})
    if rc != 0:
        failures.append(f"two folders, or a test file, are not one unity target: rc={rc} out={out!r}")
    alias = "using tcp = asio::ip::tcp;\n"
    rc, out = run({"src/serve/a.cc": alias, "src/serve/b.cc": alias})
    if rc != 0:
        failures.append(f"the same alias line twice is allowed: rc={rc} out={out!r}")
    rc, out = run({"src/serve/a.cc": "namespace {\nusing Json = nlohmann::json;\n}  // namespace\n",
                   "src/serve/b.cc": "namespace {\nusing Json = other::json;\n}  // namespace\n"})
    if rc != 1:
        failures.append(f"two aliases of one name to other types: rc={rc} out={out!r}")
    named = "namespace nvmlx::config::flags {\nstd::string Quote(std::string_view s) {\n}\n}  // namespace nvmlx::config::flags\n"
    local = "namespace nvmlx::config {\nnamespace {\nstd::string Quote(std::string_view s) {\n}\n}  // namespace\n}  // namespace nvmlx::config\n"
    rc, out = run({"src/config/a.cc": named, "src/config/b.cc": local})
    if rc != 0:
        failures.append(f"one name in two namespaces does not clash: rc={rc} out={out!r}")
    rc, out = run({"src/config/a.cc": local, "src/config/b.cc": local})
    if rc != 1 or "Quote" not in out:
        failures.append(f"anonymous helpers of one namespace clash: rc={rc} out={out!r}")
    attributed = "namespace {\n[[maybe_unused]] int DupHelper() { return 1; }\n}  // namespace\n"
    rc, out = run({"src/util/a.cc": attributed, "src/util/b.cc": attributed})
    if rc != 1 or "DupHelper" not in out:
        failures.append(f"a definition behind an attribute: rc={rc} out={out!r}")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
