#!/usr/bin/env python3
"""The daemon never changes a GPU's settings (docs/security.md): a check of the source.

nvml/ is the only code that touches NVML (scripts/check_layering.py), and it reaches the library
only through dlsym() of the names in the NVMLX_FOR_EACH_*FUNCTION lists of src/nvml/nvml_api.h.
This check fails when
  - a name in those lists is not a read-only call (a getter, GPM sampling, the Xid event set,
    init/shutdown/error strings): nvmlDeviceSet*, *Reset*, *Clear*, nvmlDeviceModify*, ... would
    have to be reviewed against docs/security.md first;
  - a file of src/ outside nvml/ and cupti/ calls dlopen/dlsym, or a CMakeLists links
    libnvidia-ml directly (either would bypass that list). Two files may, for libraries that are
    not NVML and are loaded only when a flag needs them (DL_ALLOWED); they fail the check if they
    name NVML;
  - cupti/ (PM sampling, docs/pm-sampling.md) resolves a CUPTI function outside its
    observation-only set (profiler init, chip name, the host API's configuration and evaluation,
    the PM-sampling session), or a libcuda function other than init and device enumeration.

Usage: nvml_readonly_check.py [--root DIR]; --selftest checks the checker on made-up trees.
"""
import argparse
import pathlib
import re
import sys
import tempfile

READ_ONLY = re.compile(
    r"^nvml(?:"
    r"(?:Device|System)Get\w+"  # getters, of any version suffix
    r"|Gpm(?:QueryDeviceSupport|SampleAlloc|SampleFree|SampleGet|MigSampleGet|MetricsGet)"
    r"|EventSet(?:Create|Wait_v2|Wait|Free)|DeviceRegisterEvents"  # Xid events: a subscription
    r"|Init_v2|Init|Shutdown|ErrorString"
    r")$")
# Files outside nvml/ that may dlopen/dlsym, and what: never NVML (no "nvidia-ml", no "nvml..." but
# "nvml-exporter" string in them).
DL_ALLOWED = {
    "src/attribute/kubelet_plugin.cc": "the kubelet plugin, libnvmlx_kubelet.so (-k)",
    "src/util/openssl_lazy.cc": "OpenSSL, libssl.so.3, on first use (TLS, API server)",
}
NAMES_NVML = re.compile(r'nvidia-ml|"nvml(?!-exporter)', re.I)
CUPTI_OK = re.compile(
    r"^cupti(?:ProfilerInitialize|DeviceGetChipName|GetResultString"
    r"|ProfilerHost(?:Initialize|Deinitialize|ConfigAddMetrics|GetConfigImageSize|GetConfigImage"
    r"|GetNumOfPasses|EvaluateToGpuValues)"
    r"|PmSampling\w+)$")
CUDA_OK = {"cuInit", "cuDeviceGetCount", "cuDeviceGet", "cuDeviceGetPCIBusId"}
CUPTI_LIST = re.compile(r"#define\s+NVMLX_CUPTI_FOR_EACH_FUNCTION\(X\)((?:[^\n]*\\\n)*[^\n]*)")
LIST = re.compile(r"#define\s+NVMLX_FOR_EACH_\w*FUNCTION\(X\)((?:[^\n]*\\\n)*[^\n]*)")


def check(root: pathlib.Path) -> list:
    errors = []
    api = root / "src/nvml/nvml_api.h"
    text = api.read_text()
    names = []
    for m in LIST.finditer(text):
        names += re.findall(r"\bX\((nvml\w+)\)", m.group(1))
    if not names:
        errors.append(f"{api}: no NVMLX_FOR_EACH_*FUNCTION list found")
    for n in names:
        if not READ_ONLY.match(n):
            errors.append(f"{api}: {n} is not a read-only NVML call (docs/security.md)")
    cupti_api = root / "src/cupti/cupti_api.h"
    if cupti_api.exists():
        for m in CUPTI_LIST.finditer(cupti_api.read_text()):
            for n in re.findall(r"\bX\((cupti\w+),", m.group(1)):
                if not CUPTI_OK.match(n):
                    errors.append(f"{cupti_api}: {n} is not an observation-only CUPTI call")
    for f in sorted((root / "src/cupti").glob("*.cc")) if (root / "src/cupti").exists() else []:
        for i, line in enumerate(f.read_text(errors="replace").splitlines(), 1):
            for n in re.findall(r'dlsym\([^,]+,\s*"(\w+)"', line):
                if n not in CUDA_OK and not CUPTI_OK.match(n):
                    errors.append(f"{f}:{i}: dlsym of {n}, not an observation-only call")
    for f in sorted((root / "src").rglob("*")):
        if f.suffix not in (".cc", ".h") or f.is_relative_to(root / "src/nvml"):
            continue
        if f.is_relative_to(root / "src/cupti"):
            continue
        allowed = f.relative_to(root).as_posix() in DL_ALLOWED
        for i, line in enumerate(f.read_text(errors="replace").splitlines(), 1):
            if allowed:
                if NAMES_NVML.search(line):
                    errors.append(f"{f}:{i}: names NVML in a file allowed to dlopen other libraries")
            elif re.search(r"\bdl(?:open|sym|vsym)\s*\(", line):
                errors.append(f"{f}:{i}: dlopen/dlsym outside src/nvml/")
    for f in sorted((root / "src").rglob("CMakeLists.txt")):
        code = "\n".join(line.split("#", 1)[0] for line in f.read_text().splitlines())
        if re.search(r"nvidia-ml", code):
            errors.append(f"{f}: links libnvidia-ml directly")
    return errors


def selftest() -> int:
    good = "#define NVMLX_FOR_EACH_FUNCTION(X) \\\n  X(nvmlInit_v2) X(nvmlDeviceGetUUID) \\\n  X(nvmlGpmSampleGet)\n"
    cases = [
        (good, "", []),
        (good.replace("X(nvmlGpmSampleGet)", "X(nvmlDeviceSetPowerManagementLimit)"), "",
         ["nvmlDeviceSetPowerManagementLimit is not a read-only"]),
        (good.replace("X(nvmlGpmSampleGet)", "X(nvmlDeviceResetGpuLockedClocks)"), "",
         ["nvmlDeviceResetGpuLockedClocks is not a read-only"]),
        (good, "void* h = dlopen(\"libnvidia-ml.so.1\", 0);", ["dlopen/dlsym outside src/nvml/"]),
        (good, {"src/util/openssl_lazy.cc": "void* h = dlopen(\"libssl.so.3\", 0);"}, []),
        (good, {"src/util/openssl_lazy.cc": "void* h = dlopen(\"libnvidia-ml.so.1\", 0);"},
         ["names NVML in a file allowed"]),
        ("// nothing\n", "", ["no NVMLX_FOR_EACH_*FUNCTION list"]),
    ]
    cupti_good = ("#define NVMLX_CUPTI_FOR_EACH_FUNCTION(X) \\\n"
                  "  X(cuptiPmSamplingEnable, PmEnableParams) \\\n"
                  "  X(cuptiProfilerHostInitialize, HostInitializeParams)\n")
    cupti_cases = [
        (cupti_good, 'dlsym(h, "cuInit");', []),
        (cupti_good.replace("cuptiPmSamplingEnable", "cuptiActivityEnable"), "",
         ["cuptiActivityEnable is not an observation-only CUPTI call"]),
        (cupti_good, 'dlsym(h, "cuCtxCreate");', ["dlsym of cuCtxCreate"]),
    ]
    failures = 0
    for api, other, want in cases:
        with tempfile.TemporaryDirectory() as d:
            root = pathlib.Path(d)
            (root / "src/nvml").mkdir(parents=True)
            (root / "src/app").mkdir(parents=True)
            (root / "src/nvml/nvml_api.h").write_text(api)
            files = other if isinstance(other, dict) else {"src/app/x.cc": other}
            for rel, text in files.items():
                (root / rel).parent.mkdir(parents=True, exist_ok=True)
                (root / rel).write_text(text)
            got = check(root)
            if len(got) != len(want) or any(w not in g for w, g in zip(want, got)):
                print(f"selftest: want {want}, got {got}")
                failures += 1
    for api, code, want in cupti_cases:
        with tempfile.TemporaryDirectory() as d:
            root = pathlib.Path(d)
            (root / "src/nvml").mkdir(parents=True)
            (root / "src/cupti").mkdir(parents=True)
            (root / "src/nvml/nvml_api.h").write_text(good)
            (root / "src/cupti/cupti_api.h").write_text(api)
            (root / "src/cupti/cupti.cc").write_text(code)
            got = check(root)
            if len(got) != len(want) or any(w not in g for w, g in zip(want, got)):
                print(f"selftest: want {want}, got {got}")
                failures += 1
    print("selftest:", "ok" if failures == 0 else f"{failures} failed")
    return 1 if failures else 0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default=str(pathlib.Path(__file__).resolve().parents[2]))
    ap.add_argument("--selftest", action="store_true")
    args = ap.parse_args()
    if args.selftest:
        return selftest()
    errors = check(pathlib.Path(args.root))
    for e in errors:
        print(e)
    if errors:
        return 1
    print("nvml_readonly_check: ok, every NVML call the daemon resolves is read-only")
    return 0


if __name__ == "__main__":
    sys.exit(main())
