// Our own declarations of the subset of the NVML C API that nvml-exporter uses.
//
// Written from the published header (NVML 13.3, NVML_API_VERSION 13), with exact struct layouts
// (x86_64, docs/nvml.md §7) and explicit versioned symbol names (docs/nvml.md §1: the header's
// #defines such as nvmlInit -> nvmlInit_v2 only help at compile time; we dlsym the versioned
// name). The static_asserts at the bottom pin every layout the driver writes into.
//
// The exporter never links these functions: src/nvml/nvml.cc takes their types with decltype and
// resolves them with dlsym, so an older driver that lacks one disables single fields only. The
// simulated GPU library (tools/simgpu) defines them, so both sides share one declaration.
//
// Plain C declarations: no state, no thread-safety concerns of their own. NVML itself says it is
// thread-safe; calls serialise inside the driver on the RM lock (docs/nvml.md §8).
#ifndef NVML_EXPORTER_NVML_NVML_API_H_
#define NVML_EXPORTER_NVML_NVML_API_H_

#include <cstddef>

// Every enum has int as its fixed underlying type (the C header's enums are ints too, so the
// layouts are the same): a driver newer than these declarations may write a value we do not
// list (a value type, a state), and reading that from an enum without a fixed type is undefined
// behaviour (UBSan under make asan: "load of value 42, which is not a valid value for type").
extern "C" {

typedef int nvmlReturn_t;  // enum in the header; int-sized on every ABI NVML ships for
enum : int {
  NVML_SUCCESS = 0,
  NVML_ERROR_UNINITIALIZED = 1,
  NVML_ERROR_INVALID_ARGUMENT = 2,
  NVML_ERROR_NOT_SUPPORTED = 3,
  NVML_ERROR_NO_PERMISSION = 4,
  NVML_ERROR_ALREADY_INITIALIZED = 5,
  NVML_ERROR_NOT_FOUND = 6,
  NVML_ERROR_INSUFFICIENT_SIZE = 7,
  NVML_ERROR_INSUFFICIENT_POWER = 8,
  NVML_ERROR_DRIVER_NOT_LOADED = 9,
  NVML_ERROR_TIMEOUT = 10,
  NVML_ERROR_IRQ_ISSUE = 11,
  NVML_ERROR_LIBRARY_NOT_FOUND = 12,
  NVML_ERROR_FUNCTION_NOT_FOUND = 13,
  NVML_ERROR_CORRUPTED_INFOROM = 14,
  NVML_ERROR_GPU_IS_LOST = 15,
  NVML_ERROR_RESET_REQUIRED = 16,
  NVML_ERROR_OPERATING_SYSTEM = 17,
  NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18,
  NVML_ERROR_IN_USE = 19,
  NVML_ERROR_MEMORY = 20,
  NVML_ERROR_NO_DATA = 21,
  NVML_ERROR_VGPU_ECC_NOT_SUPPORTED = 22,
  NVML_ERROR_INSUFFICIENT_RESOURCES = 23,
  NVML_ERROR_FREQ_NOT_SUPPORTED = 24,
  NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,
  NVML_ERROR_DEPRECATED = 26,
  NVML_ERROR_NOT_READY = 27,
  NVML_ERROR_GPU_NOT_FOUND = 28,
  NVML_ERROR_INVALID_STATE = 29,
  NVML_ERROR_UNKNOWN = 999,
};

typedef struct nvmlDevice_st* nvmlDevice_t;
typedef struct nvmlEventSet_st* nvmlEventSet_t;
typedef struct nvmlGpmSample_st* nvmlGpmSample_t;

// Buffer sizes from the header.
enum : unsigned {
  NVML_DEVICE_UUID_V2_BUFFER_SIZE = 96,
  NVML_DEVICE_NAME_V2_BUFFER_SIZE = 96,
  NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE = 80,
  NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE = 80,
  NVML_DEVICE_SERIAL_BUFFER_SIZE = 30,
  NVML_DEVICE_VBIOS_VERSION_BUFFER_SIZE = 32,
  NVML_DEVICE_INFOROM_VERSION_BUFFER_SIZE = 16,
  NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE = 32,
  NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE = 16,
};

// NVML_STRUCT_VERSION(x, v) = sizeof(x) | (v << 24): a bare 2 fails (nvidia-settings#78).
#define NVMLX_STRUCT_VERSION(type, ver) (unsigned)(sizeof(type) | ((ver) << 24U))

typedef enum : int {
  NVML_CLOCK_GRAPHICS = 0,
  NVML_CLOCK_SM = 1,
  NVML_CLOCK_MEM = 2,
  NVML_CLOCK_VIDEO = 3
} nvmlClockType_t;
typedef enum : int { NVML_TEMPERATURE_GPU = 0 } nvmlTemperatureSensors_t;
typedef enum : int {
  NVML_PCIE_UTIL_TX_BYTES = 0,
  NVML_PCIE_UTIL_RX_BYTES = 1
} nvmlPcieUtilCounter_t;
typedef enum : int {
  NVML_INFOROM_OEM = 0,
  NVML_INFOROM_ECC = 1,
  NVML_INFOROM_POWER = 2
} nvmlInforomObject_t;
typedef enum : int {
  NVML_MEMORY_ERROR_TYPE_CORRECTED = 0,
  NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 1
} nvmlMemoryErrorType_t;
typedef enum : int { NVML_VOLATILE_ECC = 0, NVML_AGGREGATE_ECC = 1 } nvmlEccCounterType_t;
typedef enum : int {
  NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS = 0,
  NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR = 1
} nvmlPageRetirementCause_t;
// nvmlDeviceGetP2PStatus: which capability to ask about, and the answer.
typedef enum : int {
  NVML_P2P_CAPS_INDEX_READ = 0,
  NVML_P2P_CAPS_INDEX_WRITE = 1,
  NVML_P2P_CAPS_INDEX_NVLINK = 2,
  NVML_P2P_CAPS_INDEX_ATOMICS = 3,
  NVML_P2P_CAPS_INDEX_PCI = 4,
  NVML_P2P_CAPS_INDEX_UNKNOWN = 5
} nvmlGpuP2PCapsIndex_t;
typedef enum : int {
  NVML_P2P_STATUS_OK = 0,
  NVML_P2P_STATUS_CHIPSET_NOT_SUPPORTED = 1,
  NVML_P2P_STATUS_GPU_NOT_SUPPORTED = 2,
  NVML_P2P_STATUS_IOH_TOPOLOGY_NOT_SUPPORTED = 3,
  NVML_P2P_STATUS_DISABLED_BY_REGKEY = 4,
  NVML_P2P_STATUS_NOT_SUPPORTED = 5,
  NVML_P2P_STATUS_UNKNOWN = 6
} nvmlGpuP2PStatus_t;
// nvmlDeviceGetNvLinkErrorCounter: which data-link error counter of a link.
typedef enum : int {
  NVML_NVLINK_ERROR_DL_REPLAY = 0,
  NVML_NVLINK_ERROR_DL_RECOVERY = 1,
  NVML_NVLINK_ERROR_DL_CRC_FLIT = 2,
  NVML_NVLINK_ERROR_DL_CRC_DATA = 3
} nvmlNvLinkErrorCounter_t;
// nvmlDeviceGetNvLinkState writes whether the link is active.
typedef enum : int { NVML_FEATURE_DISABLED = 0, NVML_FEATURE_ENABLED = 1 } nvmlEnableState_t;
// Links a GPU may have (the header's NVML_NVLINK_MAX_LINKS; DCGM's per-link fields stop at L17).
#define NVMLX_NVLINK_MAX_LINKS 18u
typedef enum : int {
  NVML_PERF_POLICY_POWER = 0,
  NVML_PERF_POLICY_THERMAL = 1,
  NVML_PERF_POLICY_SYNC_BOOST = 2,
  NVML_PERF_POLICY_BOARD_LIMIT = 3,
  NVML_PERF_POLICY_LOW_UTILIZATION = 4,
  NVML_PERF_POLICY_RELIABILITY = 5,
  NVML_PERF_POLICY_TOTAL_APP_CLOCKS = 10,
  NVML_PERF_POLICY_TOTAL_BASE_CLOCKS = 11,
} nvmlPerfPolicyType_t;
typedef int nvmlBrandType_t;  // enum; 0 = UNKNOWN ... see BrandName() in nvml.cc
typedef int nvmlPstates_t;    // 0..15, 32 = unknown

typedef struct {
  unsigned gpu;     // percent of time one or more kernels ran over the sample period
  unsigned memory;  // percent of time device memory was read or written
} nvmlUtilization_t;

typedef struct {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;  // v1: includes reserved
} nvmlMemory_t;

typedef struct {
  unsigned version;  // nvmlMemory_v2 = NVMLX_STRUCT_VERSION(nvmlMemory_v2_t, 2) = 0x02000028
  unsigned long long total;
  unsigned long long reserved;
  unsigned long long free;
  unsigned long long used;  // excludes reserved
} nvmlMemory_v2_t;
#define nvmlMemory_v2 NVMLX_STRUCT_VERSION(nvmlMemory_v2_t, 2)

typedef struct {
  unsigned long long bar1Total;
  unsigned long long bar1Free;
  unsigned long long bar1Used;
} nvmlBAR1Memory_t;

typedef struct {
  char busIdLegacy[NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE];
  unsigned domain;
  unsigned bus;
  unsigned device;
  unsigned pciDeviceId;  // device id in the high 16 bits, vendor 0x10DE in the low 16
  unsigned pciSubSystemId;
  char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];
} nvmlPciInfo_t;

typedef struct {
  unsigned long long referenceTime;  // µs
  unsigned long long violationTime;  // ns
} nvmlViolationTime_t;

typedef enum : int {
  NVML_VALUE_TYPE_DOUBLE = 0,
  NVML_VALUE_TYPE_UNSIGNED_INT = 1,
  NVML_VALUE_TYPE_UNSIGNED_LONG = 2,
  NVML_VALUE_TYPE_UNSIGNED_LONG_LONG = 3,
  NVML_VALUE_TYPE_SIGNED_LONG_LONG = 4,
  NVML_VALUE_TYPE_SIGNED_INT = 5,
  NVML_VALUE_TYPE_UNSIGNED_SHORT = 6,
} nvmlValueType_t;

typedef union {
  double dVal;
  unsigned int uiVal;
  unsigned long ulVal;
  unsigned long long ullVal;
  long long sllVal;
  int siVal;
  unsigned short usVal;
} nvmlValue_t;

typedef struct {
  unsigned fieldId;
  unsigned scopeId;     // link or scope; UINT_MAX = all links
  long long timestamp;  // µs since epoch
  long long latencyUsec;
  nvmlValueType_t valueType;
  nvmlReturn_t nvmlReturn;  // check per element: the call succeeds even when fields fail
  nvmlValue_t value;
} nvmlFieldValue_t;

// NVML field ids (nvmlDeviceGetFieldValues). Only the ones we read. See docs/nvml.md §2.
enum : unsigned {
  NVML_FI_DEV_ECC_CURRENT = 1,
  NVML_FI_DEV_ECC_PENDING = 2,
  NVML_FI_DEV_ECC_SBE_VOL_TOTAL = 3,
  NVML_FI_DEV_ECC_DBE_VOL_TOTAL = 4,
  NVML_FI_DEV_ECC_SBE_AGG_TOTAL = 5,
  NVML_FI_DEV_ECC_DBE_AGG_TOTAL = 6,
  NVML_FI_DEV_RETIRED_DBE = 30,
  NVML_FI_DEV_RETIRED_PENDING = 31,
  NVML_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL = 38,
  NVML_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL = 45,
  NVML_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL = 52,
  NVML_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL = 59,
  NVML_FI_DEV_PERF_POLICY_POWER = 74,
  NVML_FI_DEV_PERF_POLICY_THERMAL = 75,
  NVML_FI_DEV_PERF_POLICY_SYNC_BOOST = 76,
  NVML_FI_DEV_PERF_POLICY_BOARD_LIMIT = 77,
  NVML_FI_DEV_PERF_POLICY_LOW_UTILIZATION = 78,
  NVML_FI_DEV_PERF_POLICY_RELIABILITY = 79,
  NVML_FI_DEV_PERF_POLICY_TOTAL_APP_CLOCKS = 80,
  NVML_FI_DEV_PERF_POLICY_TOTAL_BASE_CLOCKS = 81,
  NVML_FI_DEV_MEMORY_TEMP = 82,
  NVML_FI_DEV_TOTAL_ENERGY_CONSUMPTION = 83,
  NVML_FI_DEV_PCIE_REPLAY_COUNTER = 94,
  NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX = 138,
  NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX = 139,
  NVML_FI_DEV_REMAPPED_COR = 142,  // COR=142 and UNC=143 are easy to swap
  NVML_FI_DEV_REMAPPED_UNC = 143,
  NVML_FI_DEV_REMAPPED_PENDING = 144,
  NVML_FI_DEV_REMAPPED_FAILURE = 145,
  NVML_FI_DEV_PCIE_COUNT_CORRECTABLE_ERRORS = 173,
  NVML_FI_DEV_POWER_INSTANT = 186,
  NVML_FI_DEV_GET_GPU_RECOVERY_ACTION = 230,  // nvmlDeviceGpuRecoveryAction_t (0 none .. 4)
  // R580 answers 269-271 (13.1+ header ids); 251-253 of the 12.9/13.0 headers are NOT_SUPPORTED.
  NVML_FI_DEV_CLOCKS_EVENT_REASON_SW_THERM_SLOWDOWN = 269,
  NVML_FI_DEV_CLOCKS_EVENT_REASON_HW_THERM_SLOWDOWN = 270,
  NVML_FI_DEV_CLOCKS_EVENT_REASON_HW_POWER_BRAKE_SLOWDOWN = 271,
};
#define NVMLX_SCOPE_ALL_LINKS 0xFFFFFFFFu

typedef struct {
  int featureCode;  // nvmlGridLicenseFeatureCode_t; 1 = vGPU
  unsigned featureState;
  char licenseInfo[128];
  char productName[128];
  unsigned featureEnabled;
  struct {
    unsigned year;
    unsigned short month, day, hour, min, sec;
    unsigned char status;
  } licenseExpiry;
} nvmlGridLicensableFeature_t;

typedef struct {
  int isGridLicenseSupported;
  unsigned licensableFeaturesCount;
  nvmlGridLicensableFeature_t gridLicensableFeatures[3];
} nvmlGridLicensableFeatures_t;
#define NVML_GRID_LICENSE_FEATURE_CODE_VGPU 1

// Events (Xid). nvmlEventTypeXidCriticalError = 0x8; eventData = the Xid.
#define nvmlEventTypeXidCriticalError 0x0000000000000008ULL
typedef struct {
  nvmlDevice_t device;
  unsigned long long eventType;
  unsigned long long eventData;
  unsigned gpuInstanceId;
  unsigned computeInstanceId;
} nvmlEventData_t;

// GPM (Hopper+). Versions are the raw 1, not NVMLX_STRUCT_VERSION (go-nvml#168).
#define NVML_GPM_SUPPORT_VERSION 1
#define NVML_GPM_METRICS_GET_VERSION 1
#define NVMLX_GPM_METRIC_MAX 333  // 98 (<=12.8), 210 (12.9-13.1), 333 (13.2+): declare the largest
typedef struct {
  unsigned version;
  unsigned isSupportedDevice;
} nvmlGpmSupport_t;
typedef struct {
  unsigned metricId;
  nvmlReturn_t nvmlReturn;
  double value;
  struct {
    char* shortName;
    char* longName;
    char* unit;
  } metricInfo;
} nvmlGpmMetric_t;
typedef struct {
  unsigned version;
  unsigned numMetrics;
  nvmlGpmSample_t sample1;
  nvmlGpmSample_t sample2;
  nvmlGpmMetric_t metrics[NVMLX_GPM_METRIC_MAX];
} nvmlGpmMetricsGet_t;

// MIG (docs/nvml.md §5). Mode values of nvmlDeviceGetMigMode.
enum : unsigned { NVML_DEVICE_MIG_DISABLE = 0, NVML_DEVICE_MIG_ENABLE = 1 };
// nvmlDeviceGetAttributes_v2 (works on a MIG device handle without root).
typedef struct {
  unsigned multiprocessorCount;
  unsigned sharedCopyEngineCount;
  unsigned sharedDecoderCount;
  unsigned sharedEncoderCount;
  unsigned sharedJpegCount;
  unsigned sharedOfaCount;
  unsigned gpuInstanceSliceCount;
  unsigned computeInstanceSliceCount;
  unsigned long long memorySizeMB;
} nvmlDeviceAttributes_t;
// nvmlDeviceGetGpuInstanceProfileInfo (the v1 struct; profile indexes 0 = 1 slice, 1 = 2, 2 = 3,
// 3 = 4, 4 = 7, 5 = 8, 6 = 6, 7 = 1 slice rev1, 8 = 2 slice rev1, 9 = 1 slice rev2, ...).
typedef struct {
  unsigned id;
  unsigned isP2pSupported;
  unsigned sliceCount;
  unsigned instanceCount;
  unsigned multiprocessorCount;
  unsigned copyEngineCount;
  unsigned decoderCount;
  unsigned encoderCount;
  unsigned jpegCount;
  unsigned ofaCount;
  unsigned long long memorySizeMB;
} nvmlGpuInstanceProfileInfo_t;
// Processes (docs/nvml.md §4). nvmlProcessInfo_t is nvmlProcessInfo_v2_t: what _v3 and _v2
// write, except drivers 535.43-535.86 whose _v3 wrote 32-byte entries (an extra
// usedGpuCcProtectedMemory) with no version bump: readers measure the stride (nvml.cc).
typedef struct {
  unsigned pid;
  unsigned long long usedGpuMemory;  // bytes; NVML_VALUE_NOT_AVAILABLE when unknown
  unsigned gpuInstanceId;            // 0xFFFFFFFF when MIG is off
  unsigned computeInstanceId;
} nvmlProcessInfo_t;
typedef struct {  // the legacy unversioned nvmlDeviceGetComputeRunningProcesses
  unsigned pid;
  unsigned long long usedGpuMemory;
} nvmlProcessInfo_v1_t;
#define NVMLX_VALUE_NOT_AVAILABLE_ULL 0xFFFFFFFFFFFFFFFFULL
// nvmlDeviceGetProcessUtilization (Maxwell+): pid first, timeStamp in µs.
typedef struct {
  unsigned pid;
  unsigned long long timeStamp;
  unsigned smUtil;
  unsigned memUtil;
  unsigned encUtil;
  unsigned decUtil;
} nvmlProcessUtilizationSample_t;
// nvmlDeviceGetProcessesUtilizationInfo (NVML 12.4 / R550+): timeStamp first.
typedef struct {
  unsigned long long timeStamp;
  unsigned pid;
  unsigned smUtil;
  unsigned memUtil;
  unsigned encUtil;
  unsigned decUtil;
  unsigned jpgUtil;
  unsigned ofaUtil;
} nvmlProcessUtilizationInfo_v1_t;
typedef struct {
  unsigned version;              // nvmlProcessesUtilizationInfo_v1 = 0x01000018
  unsigned processSamplesCount;  // IN: capacity of procUtilArray; OUT: entries written / needed
  unsigned long long lastSeenTimeStamp;  // only samples newer than this come back
  nvmlProcessUtilizationInfo_v1_t* procUtilArray;
} nvmlProcessesUtilizationInfo_t;
#define nvmlProcessesUtilizationInfo_v1 NVMLX_STRUCT_VERSION(nvmlProcessesUtilizationInfo_t, 1)

// --- Functions. Each is resolved with dlsym by this exact (versioned) name. -------------------
const char* nvmlErrorString(nvmlReturn_t result);
nvmlReturn_t nvmlInit_v2(void);
nvmlReturn_t nvmlShutdown(void);
nvmlReturn_t nvmlSystemGetDriverVersion(char* version, unsigned length);
nvmlReturn_t nvmlSystemGetNVMLVersion(char* version, unsigned length);
nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int* cudaDriverVersion);
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned* deviceCount);
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned index, nvmlDevice_t* device);
nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid, unsigned length);
nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name, unsigned length);
nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t* pci);
nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_t device, unsigned* minorNumber);
nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t device, unsigned* index);
nvmlReturn_t nvmlDeviceGetSerial(nvmlDevice_t device, char* serial, unsigned length);
nvmlReturn_t nvmlDeviceGetBrand(nvmlDevice_t device, nvmlBrandType_t* type);
nvmlReturn_t nvmlDeviceGetVbiosVersion(nvmlDevice_t device, char* version, unsigned length);
nvmlReturn_t nvmlDeviceGetInforomVersion(nvmlDevice_t device, nvmlInforomObject_t object,
                                         char* version, unsigned length);
nvmlReturn_t nvmlDeviceGetInforomImageVersion(nvmlDevice_t device, char* version, unsigned length);
nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, nvmlClockType_t type, unsigned* clock);
nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t device, nvmlClockType_t type, unsigned* clock);
nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, nvmlTemperatureSensors_t sensorType,
                                      unsigned* temp);
nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned* power);  // mW
nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t device,
                                                 unsigned long long* energy);          // mJ
nvmlReturn_t nvmlDeviceGetPowerManagementLimit(nvmlDevice_t device, unsigned* limit);  // mW
nvmlReturn_t nvmlDeviceGetPowerManagementLimitConstraints(nvmlDevice_t device, unsigned* minLimit,
                                                          unsigned* maxLimit);
nvmlReturn_t nvmlDeviceGetPowerManagementDefaultLimit(nvmlDevice_t device, unsigned* defaultLimit);
nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t device, unsigned* limit);
nvmlReturn_t nvmlDeviceGetPerformanceState(nvmlDevice_t device, nvmlPstates_t* pState);
nvmlReturn_t nvmlDeviceGetFanSpeed(nvmlDevice_t device, unsigned* speed);
nvmlReturn_t nvmlDeviceGetPcieThroughput(nvmlDevice_t device, nvmlPcieUtilCounter_t counter,
                                         unsigned* value);  // KB/s; blocks ~20 ms
nvmlReturn_t nvmlDeviceGetPcieReplayCounter(nvmlDevice_t device, unsigned* value);
nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t device, unsigned* currLinkGen);
nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t device, unsigned* currLinkWidth);
nvmlReturn_t nvmlDeviceGetMaxPcieLinkGeneration(nvmlDevice_t device, unsigned* maxLinkGen);
nvmlReturn_t nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_t device, unsigned* maxLinkWidth);
nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t* utilization);
nvmlReturn_t nvmlDeviceGetEncoderUtilization(nvmlDevice_t device, unsigned* utilization,
                                             unsigned* samplingPeriodUs);
nvmlReturn_t nvmlDeviceGetDecoderUtilization(nvmlDevice_t device, unsigned* utilization,
                                             unsigned* samplingPeriodUs);
nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t* memory);
nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t* memory);
nvmlReturn_t nvmlDeviceGetBAR1MemoryInfo(nvmlDevice_t device, nvmlBAR1Memory_t* bar1Memory);
nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t device, int valuesCount,
                                      nvmlFieldValue_t* values);
nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t device, nvmlMemoryErrorType_t errorType,
                                         nvmlEccCounterType_t counterType,
                                         unsigned long long* eccCounts);
nvmlReturn_t nvmlDeviceGetRetiredPages(nvmlDevice_t device, nvmlPageRetirementCause_t cause,
                                       unsigned* pageCount, unsigned long long* addresses);
nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t device, unsigned* corrRows, unsigned* uncRows,
                                       unsigned* isPending, unsigned* failureOccurred);
nvmlReturn_t nvmlDeviceGetP2PStatus(nvmlDevice_t device1, nvmlDevice_t device2,
                                    nvmlGpuP2PCapsIndex_t p2pIndex, nvmlGpuP2PStatus_t* p2pStatus);
// Per link (0 .. NVMLX_NVLINK_MAX_LINKS-1): NOT_SUPPORTED without NVLink, INVALID_ARGUMENT for a
// link the GPU does not have.
nvmlReturn_t nvmlDeviceGetNvLinkErrorCounter(nvmlDevice_t device, unsigned link,
                                             nvmlNvLinkErrorCounter_t counter,
                                             unsigned long long* counterValue);
nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t device, unsigned link,
                                      nvmlEnableState_t* isActive);
nvmlReturn_t nvmlDeviceGetViolationStatus(nvmlDevice_t device, nvmlPerfPolicyType_t perfPolicyType,
                                          nvmlViolationTime_t* violTime);
// R535+; older drivers have only the Throttle name (same bits).
nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device,
                                                    unsigned long long* clocksEventReasons);
nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t device,
                                                       unsigned long long* clocksThrottleReasons);
nvmlReturn_t nvmlDeviceGetGridLicensableFeatures_v4(nvmlDevice_t device,
                                                    nvmlGridLicensableFeatures_t* features);
nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t* set);
nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t device, unsigned long long eventTypes,
                                      nvmlEventSet_t set);
nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t* data, unsigned timeoutms);
nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set);
nvmlReturn_t nvmlGpmQueryDeviceSupport(nvmlDevice_t device, nvmlGpmSupport_t* gpmSupport);
nvmlReturn_t nvmlGpmSampleAlloc(nvmlGpmSample_t* gpmSample);
nvmlReturn_t nvmlGpmSampleFree(nvmlGpmSample_t gpmSample);
nvmlReturn_t nvmlGpmSampleGet(nvmlDevice_t device, nvmlGpmSample_t gpmSample);
nvmlReturn_t nvmlGpmMigSampleGet(nvmlDevice_t device, unsigned gpuInstanceId,
                                 nvmlGpmSample_t gpmSample);
nvmlReturn_t nvmlGpmMetricsGet(nvmlGpmMetricsGet_t* metricsGet);
nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned* currentMode,
                                  unsigned* pendingMode);
nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t device, unsigned* count);
nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t device, unsigned index,
                                                 nvmlDevice_t* migDevice);
nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t device, unsigned* id);
nvmlReturn_t nvmlDeviceGetComputeInstanceId(nvmlDevice_t device, unsigned* id);
nvmlReturn_t nvmlDeviceGetAttributes_v2(nvmlDevice_t device, nvmlDeviceAttributes_t* attributes);
nvmlReturn_t nvmlDeviceGetGpuInstanceProfileInfo(nvmlDevice_t device, unsigned profile,
                                                 nvmlGpuInstanceProfileInfo_t* info);
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned* infoCount,
                                                     nvmlProcessInfo_t* infos);
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t device, unsigned* infoCount,
                                                     nvmlProcessInfo_t* infos);
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t device, unsigned* infoCount,
                                                  nvmlProcessInfo_v1_t* infos);
nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t device,
                                             nvmlProcessUtilizationSample_t* utilization,
                                             unsigned* processSamplesCount,
                                             unsigned long long lastSeenTimeStamp);
nvmlReturn_t nvmlDeviceGetProcessesUtilizationInfo(
    nvmlDevice_t device, nvmlProcessesUtilizationInfo_t* procesesUtilInfo);

// GPU fabric (NVLink fabric manager) state and health. v3 adds healthSummary to v2; a driver
// without v3 answers ARGUMENT_VERSION_MISMATCH to it (DCGM 4.6 then asks v2).
enum : unsigned { NVML_GPU_FABRIC_UUID_LEN = 16 };
typedef unsigned char nvmlGpuFabricState_t;
typedef struct {
  unsigned version;  // nvmlGpuFabricInfo_v2
  unsigned char clusterUuid[NVML_GPU_FABRIC_UUID_LEN];
  nvmlReturn_t status;
  unsigned cliqueId;
  nvmlGpuFabricState_t state;
  unsigned healthMask;  // 2-bit and 4-bit sub-fields, NVML_GPU_FABRIC_HEALTH_MASK_*
} nvmlGpuFabricInfo_v2_t;
typedef struct {
  unsigned version;  // nvmlGpuFabricInfo_v3
  unsigned char clusterUuid[NVML_GPU_FABRIC_UUID_LEN];
  nvmlReturn_t status;
  unsigned cliqueId;
  nvmlGpuFabricState_t state;
  unsigned healthMask;
  unsigned char healthSummary;  // 0 not supported, 1 healthy, 2 unhealthy, 3 limited capacity
} nvmlGpuFabricInfo_v3_t;
typedef nvmlGpuFabricInfo_v3_t nvmlGpuFabricInfoV_t;
#define nvmlGpuFabricInfo_v2 NVMLX_STRUCT_VERSION(nvmlGpuFabricInfo_v2_t, 2)
#define nvmlGpuFabricInfo_v3 NVMLX_STRUCT_VERSION(nvmlGpuFabricInfo_v3_t, 3)
// Takes either layout: the version field says which one the caller passed.
nvmlReturn_t nvmlDeviceGetGpuFabricInfoV(nvmlDevice_t device, nvmlGpuFabricInfoV_t* gpuFabricInfo);

}  // extern "C"

// Every function above, for the loader's symbol table and the simulator's coverage test.
// X(name) — the name is also the dlsym symbol.
// clang-format off
#define NVMLX_FOR_EACH_FUNCTION(X)                                                              \
  X(nvmlErrorString) X(nvmlInit_v2) X(nvmlShutdown) X(nvmlSystemGetDriverVersion)               \
  X(nvmlSystemGetNVMLVersion) X(nvmlSystemGetCudaDriverVersion_v2) X(nvmlDeviceGetCount_v2)     \
  X(nvmlDeviceGetHandleByIndex_v2) X(nvmlDeviceGetUUID) X(nvmlDeviceGetName)                    \
  X(nvmlDeviceGetPciInfo_v3) X(nvmlDeviceGetMinorNumber) X(nvmlDeviceGetIndex)                  \
  X(nvmlDeviceGetSerial) X(nvmlDeviceGetBrand) X(nvmlDeviceGetVbiosVersion)                     \
  X(nvmlDeviceGetInforomVersion) X(nvmlDeviceGetInforomImageVersion) X(nvmlDeviceGetClockInfo)  \
  X(nvmlDeviceGetMaxClockInfo) X(nvmlDeviceGetTemperature) X(nvmlDeviceGetPowerUsage)           \
  X(nvmlDeviceGetTotalEnergyConsumption) X(nvmlDeviceGetPowerManagementLimit)                   \
  X(nvmlDeviceGetPowerManagementLimitConstraints) X(nvmlDeviceGetPowerManagementDefaultLimit)   \
  X(nvmlDeviceGetEnforcedPowerLimit) X(nvmlDeviceGetPerformanceState) X(nvmlDeviceGetFanSpeed)  \
  X(nvmlDeviceGetPcieThroughput) X(nvmlDeviceGetPcieReplayCounter)                              \
  X(nvmlDeviceGetCurrPcieLinkGeneration) X(nvmlDeviceGetCurrPcieLinkWidth)                      \
  X(nvmlDeviceGetMaxPcieLinkGeneration) X(nvmlDeviceGetMaxPcieLinkWidth)                        \
  X(nvmlDeviceGetUtilizationRates) X(nvmlDeviceGetEncoderUtilization)                           \
  X(nvmlDeviceGetDecoderUtilization) X(nvmlDeviceGetMemoryInfo) X(nvmlDeviceGetMemoryInfo_v2)   \
  X(nvmlDeviceGetBAR1MemoryInfo) X(nvmlDeviceGetFieldValues) X(nvmlDeviceGetTotalEccErrors)     \
  X(nvmlDeviceGetRetiredPages) X(nvmlDeviceGetRemappedRows) X(nvmlDeviceGetViolationStatus)     \
  X(nvmlDeviceGetCurrentClocksEventReasons) X(nvmlDeviceGetCurrentClocksThrottleReasons)        \
  X(nvmlDeviceGetGridLicensableFeatures_v4) X(nvmlEventSetCreate) X(nvmlDeviceRegisterEvents)   \
  X(nvmlEventSetWait_v2) X(nvmlEventSetFree) X(nvmlGpmQueryDeviceSupport) X(nvmlGpmSampleAlloc) \
  X(nvmlGpmSampleFree) X(nvmlGpmSampleGet) X(nvmlGpmMigSampleGet) X(nvmlGpmMetricsGet)       \
  X(nvmlDeviceGetMigMode) X(nvmlDeviceGetMaxMigDeviceCount)                                     \
  X(nvmlDeviceGetMigDeviceHandleByIndex) X(nvmlDeviceGetGpuInstanceId)                          \
  X(nvmlDeviceGetComputeInstanceId) X(nvmlDeviceGetAttributes_v2)                               \
  X(nvmlDeviceGetGpuInstanceProfileInfo) X(nvmlDeviceGetP2PStatus)  \
  NVMLX_FOR_EACH_PROCESS_FUNCTION(X) NVMLX_FOR_EACH_NVLINK_FUNCTION(X)                          \
  NVMLX_FOR_EACH_FABRIC_FUNCTION(X)
// Per-process calls (processes and their utilization), kept on their own line for merging.
#define NVMLX_FOR_EACH_PROCESS_FUNCTION(X)                                                      \
  X(nvmlDeviceGetComputeRunningProcesses_v3) X(nvmlDeviceGetComputeRunningProcesses_v2)         \
  X(nvmlDeviceGetComputeRunningProcesses) X(nvmlDeviceGetProcessUtilization)                    \
  X(nvmlDeviceGetProcessesUtilizationInfo)
// Per-link NVLink calls (error counters, link state), on their own line for merging.
#define NVMLX_FOR_EACH_NVLINK_FUNCTION(X) \
  X(nvmlDeviceGetNvLinkErrorCounter) X(nvmlDeviceGetNvLinkState)
// GPU fabric info (DCGM_FI_DEV_FABRIC_HEALTH_MASK / _SUMMARY), on its own line for merging.
#define NVMLX_FOR_EACH_FABRIC_FUNCTION(X) X(nvmlDeviceGetGpuFabricInfoV)
// clang-format on

// Layouts the driver writes into (x86_64, docs/nvml.md §7).
static_assert(sizeof(nvmlValueType_t) == 4);
static_assert(sizeof(nvmlNvLinkErrorCounter_t) == 4);
static_assert(sizeof(nvmlEnableState_t) == 4);
static_assert(sizeof(nvmlPciInfo_t) == 68);
static_assert(offsetof(nvmlPciInfo_t, busId) == 36);
static_assert(sizeof(nvmlMemory_t) == 24);
static_assert(sizeof(nvmlMemory_v2_t) == 40);
static_assert(nvmlMemory_v2 == 0x02000028u);
static_assert(sizeof(nvmlFieldValue_t) == 40);
static_assert(offsetof(nvmlFieldValue_t, valueType) == 24);
static_assert(offsetof(nvmlFieldValue_t, value) == 32);
static_assert(sizeof(nvmlGridLicensableFeature_t) == 284);
static_assert(sizeof(nvmlGridLicensableFeatures_t) == 860);
static_assert(sizeof(nvmlEventData_t) == 32);
static_assert(sizeof(nvmlGpmMetric_t) == 40);
static_assert(offsetof(nvmlGpmMetricsGet_t, metrics) == 24);
static_assert(sizeof(nvmlGpmMetricsGet_t) == 24 + 40 * 333);
static_assert(sizeof(nvmlDeviceAttributes_t) == 40);
static_assert(offsetof(nvmlDeviceAttributes_t, gpuInstanceSliceCount) == 24);
static_assert(offsetof(nvmlDeviceAttributes_t, memorySizeMB) == 32);
static_assert(sizeof(nvmlGpuInstanceProfileInfo_t) == 48);
static_assert(offsetof(nvmlGpuInstanceProfileInfo_t, sliceCount) == 8);
static_assert(offsetof(nvmlGpuInstanceProfileInfo_t, memorySizeMB) == 40);

static_assert(sizeof(nvmlProcessInfo_t) == 24);
static_assert(offsetof(nvmlProcessInfo_t, usedGpuMemory) == 8);
static_assert(offsetof(nvmlProcessInfo_t, computeInstanceId) == 20);
static_assert(sizeof(nvmlProcessInfo_v1_t) == 16);
static_assert(sizeof(nvmlProcessUtilizationSample_t) == 32);
static_assert(offsetof(nvmlProcessUtilizationSample_t, timeStamp) == 8);
static_assert(offsetof(nvmlProcessUtilizationSample_t, smUtil) == 16);
static_assert(offsetof(nvmlProcessUtilizationSample_t, decUtil) == 28);
static_assert(sizeof(nvmlProcessUtilizationInfo_v1_t) == 40);
static_assert(offsetof(nvmlProcessUtilizationInfo_v1_t, pid) == 8);
static_assert(sizeof(nvmlProcessesUtilizationInfo_t) == 24);
static_assert(offsetof(nvmlProcessesUtilizationInfo_t, lastSeenTimeStamp) == 8);
static_assert(offsetof(nvmlProcessesUtilizationInfo_t, procUtilArray) == 16);
static_assert(nvmlProcessesUtilizationInfo_v1 == 0x01000018u);
static_assert(sizeof(nvmlGpuFabricInfo_v2_t) == 36);
static_assert(offsetof(nvmlGpuFabricInfo_v2_t, healthMask) == 32);
static_assert(sizeof(nvmlGpuFabricInfo_v3_t) == 40);
static_assert(offsetof(nvmlGpuFabricInfo_v3_t, healthSummary) == 36);
static_assert(nvmlGpuFabricInfo_v2 == 0x02000024u);
static_assert(nvmlGpuFabricInfo_v3 == 0x03000028u);

#endif  // NVML_EXPORTER_NVML_NVML_API_H_
