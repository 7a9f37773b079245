// Our own declarations of the part of CUPTI (CUDA 13, libcupti.so.13) that PM sampling uses:
// the profiler initialisation, the PM-sampling API (cupti_pmsampling.h) and the profiler host
// API (cupti_profiler_host.h, which libcupti implements on top of libnvperf_host.so).
//
// Why our own: the exporter builds and its CI runs without the CUDA toolkit, and nothing is
// linked: libcupti is dlopen()ed at run time (cupti/cupti.h). Only the structs and functions we
// call are declared, field for field as in the CUDA 13.0 headers; cupti_api_test.cc checks every
// size and offset against the toolkit's headers when they are present at build time.
//
// Every *_Params struct starts with structSize, which CUPTI uses as the struct's version: we pass
// the size up to the last field we declare, as the toolkit's *_STRUCT_SIZE macros do.
#ifndef NVML_EXPORTER_CUPTI_CUPTI_API_H_
#define NVML_EXPORTER_CUPTI_CUPTI_API_H_

#include <cstddef>
#include <cstdint>

namespace nvmlx::cupti::api {

using CUptiResult = int;
inline constexpr CUptiResult kSuccess = 0;
inline constexpr CUptiResult kErrorInvalidParameter = 1;
inline constexpr CUptiResult kErrorInvalidDevice = 2;
inline constexpr CUptiResult kErrorInvalidOperation = 7;
inline constexpr CUptiResult kErrorOutOfMemory = 8;
inline constexpr CUptiResult kErrorNotInitialized = 15;
inline constexpr CUptiResult kErrorInvalidMetricName = 17;
inline constexpr CUptiResult kErrorHardwareBusy = 26;
inline constexpr CUptiResult kErrorNotSupported = 27;
inline constexpr CUptiResult kErrorInsufficientPrivileges = 35;
inline constexpr CUptiResult kErrorMigDeviceNotSupported = 43;
inline constexpr CUptiResult kErrorUnknown = 999;

// CUpti_ProfilerType
inline constexpr int kProfilerTypePmSampling = 1;
// CUpti_PmSampling_TriggerMode
inline constexpr int kTriggerGpuSysclkInterval = 0;  // interval in sys clocks (Turing, GA100)
inline constexpr int kTriggerGpuTimeInterval = 1;    // interval in ns (GA10x and later)
// CUpti_PmSampling_HardwareBuffer_AppendMode
inline constexpr int kAppendKeepOldest = 0;
inline constexpr int kAppendKeepLatest = 1;  // not on Turing
// CUpti_PmSampling_DecodeStopReason
inline constexpr int kDecodeStopOther = 0;
inline constexpr int kDecodeStopCounterDataFull = 1;
inline constexpr int kDecodeStopEndOfRecords = 2;

struct PmSamplingObject;  // CUpti_PmSampling_Object, opaque
struct HostObject;        // CUpti_Profiler_Host_Object, opaque

struct ProfilerInitializeParams {  // CUpti_Profiler_Initialize_Params
  size_t structSize;
  void* pPriv;
};
struct DeviceGetChipNameParams {  // CUpti_Device_GetChipName_Params
  size_t structSize;
  void* pPriv;
  size_t deviceIndex;
  const char* pChipName;
};

struct HostInitializeParams {  // CUpti_Profiler_Host_Initialize_Params
  size_t structSize;
  void* pPriv;
  int profilerType;  // CUpti_ProfilerType
  const char* pChipName;
  const uint8_t* pCounterAvailabilityImage;
  HostObject* pHostObject;
};
struct HostDeinitializeParams {  // CUpti_Profiler_Host_Deinitialize_Params
  size_t structSize;
  void* pPriv;
  HostObject* pHostObject;
};
struct HostConfigAddMetricsParams {  // CUpti_Profiler_Host_ConfigAddMetrics_Params
  size_t structSize;
  void* pPriv;
  HostObject* pHostObject;
  const char** ppMetricNames;
  size_t numMetrics;
};
struct HostGetConfigImageSizeParams {  // CUpti_Profiler_Host_GetConfigImageSize_Params
  size_t structSize;
  void* pPriv;
  HostObject* pHostObject;
  size_t configImageSize;
};
struct HostGetConfigImageParams {  // CUpti_Profiler_Host_GetConfigImage_Params
  size_t structSize;
  void* pPriv;
  HostObject* pHostObject;
  size_t configImageSize;
  uint8_t* pConfigImage;
};
struct HostGetNumOfPassesParams {  // CUpti_Profiler_Host_GetNumOfPasses_Params
  size_t structSize;
  void* pPriv;
  size_t configImageSize;
  uint8_t* pConfigImage;
  size_t numOfPasses;
};
struct HostEvaluateToGpuValuesParams {  // CUpti_Profiler_Host_EvaluateToGpuValues_Params
  size_t structSize;
  void* pPriv;
  HostObject* pHostObject;
  const uint8_t* pCounterDataImage;
  size_t counterDataImageSize;
  size_t rangeIndex;
  const char** ppMetricNames;
  size_t numMetrics;
  double* pMetricValues;
};

struct PmSetConfigParams {  // CUpti_PmSampling_SetConfig_Params
  size_t structSize;
  void* pPriv;
  PmSamplingObject* pPmSamplingObject;
  size_t configSize;
  const uint8_t* pConfig;
  size_t hardwareBufferSize;
  uint64_t samplingInterval;
  int triggerMode;         // CUpti_PmSampling_TriggerMode
  int hwBufferAppendMode;  // CUpti_PmSampling_HardwareBuffer_AppendMode
};
struct PmEnableParams {  // CUpti_PmSampling_Enable_Params
  size_t structSize;
  void* pPriv;
  size_t deviceIndex;
  PmSamplingObject* pPmSamplingObject;
};
// Disable, Start and Stop take the same three fields.
struct PmObjectParams {  // CUpti_PmSampling_{Disable,Start,Stop}_Params
  size_t structSize;
  void* pPriv;
  PmSamplingObject* pPmSamplingObject;
};
struct PmDecodeDataParams {  // CUpti_PmSampling_DecodeData_Params
  size_t structSize;
  void* pPriv;
  PmSamplingObject* pPmSamplingObject;
  uint8_t* pCounterDataImage;
  size_t counterDataImageSize;
  int decodeStopReason;  // CUpti_PmSampling_DecodeStopReason
  uint8_t overflow;
};
struct PmGetCounterAvailabilityParams {  // CUpti_PmSampling_GetCounterAvailability_Params
  size_t structSize;
  void* pPriv;
  size_t deviceIndex;
  size_t counterAvailabilityImageSize;
  uint8_t* pCounterAvailabilityImage;
};
struct PmGetCounterDataSizeParams {  // CUpti_PmSampling_GetCounterDataSize_Params
  size_t structSize;
  void* pPriv;
  PmSamplingObject* pPmSamplingObject;
  const char** pMetricNames;
  size_t numMetrics;
  uint32_t maxSamples;
  size_t counterDataSize;
};
struct PmCounterDataImageInitializeParams {  // CUpti_PmSampling_CounterDataImage_Initialize_Params
  size_t structSize;
  void* pPriv;
  PmSamplingObject* pPmSamplingObject;
  size_t counterDataSize;
  uint8_t* pCounterData;
};
struct PmGetCounterDataInfoParams {  // CUpti_PmSampling_GetCounterDataInfo_Params
  size_t structSize;
  void* pPriv;
  const uint8_t* pCounterDataImage;
  size_t counterDataImageSize;
  size_t numTotalSamples;
  size_t numPopulatedSamples;
  size_t numCompletedSamples;
};
struct PmGetSampleInfoParams {  // CUpti_PmSampling_CounterData_GetSampleInfo_Params
  size_t structSize;
  void* pPriv;
  PmSamplingObject* pPmSamplingObject;
  const uint8_t* pCounterDataImage;
  size_t counterDataImageSize;
  size_t sampleIndex;
  uint64_t startTimestamp;
  uint64_t endTimestamp;
};

// structSize of each, as the toolkit's *_STRUCT_SIZE macros compute it: up to the end of the
// last field (no tail padding). cupti_api_test.cc compares them with the macros.
#define NVMLX_CUPTI_STRUCT_SIZE(T, last) (offsetof(T, last) + sizeof(T::last))
inline constexpr size_t kProfilerInitializeParamsSize =
    NVMLX_CUPTI_STRUCT_SIZE(ProfilerInitializeParams, pPriv);
inline constexpr size_t kDeviceGetChipNameParamsSize =
    NVMLX_CUPTI_STRUCT_SIZE(DeviceGetChipNameParams, pChipName);
inline constexpr size_t kHostInitializeParamsSize =
    NVMLX_CUPTI_STRUCT_SIZE(HostInitializeParams, pHostObject);
inline constexpr size_t kHostDeinitializeParamsSize =
    NVMLX_CUPTI_STRUCT_SIZE(HostDeinitializeParams, pHostObject);
inline constexpr size_t kHostConfigAddMetricsParamsSize =
    NVMLX_CUPTI_STRUCT_SIZE(HostConfigAddMetricsParams, numMetrics);
inline constexpr size_t kHostGetConfigImageSizeParamsSize =
    NVMLX_CUPTI_STRUCT_SIZE(HostGetConfigImageSizeParams, configImageSize);
inline constexpr size_t kHostGetConfigImageParamsSize =
    NVMLX_CUPTI_STRUCT_SIZE(HostGetConfigImageParams, pConfigImage);
inline constexpr size_t kHostGetNumOfPassesParamsSize =
    NVMLX_CUPTI_STRUCT_SIZE(HostGetNumOfPassesParams, numOfPasses);
inline constexpr size_t kHostEvaluateToGpuValuesParamsSize =
    NVMLX_CUPTI_STRUCT_SIZE(HostEvaluateToGpuValuesParams, pMetricValues);
inline constexpr size_t kPmSetConfigParamsSize =
    NVMLX_CUPTI_STRUCT_SIZE(PmSetConfigParams, hwBufferAppendMode);
inline constexpr size_t kPmEnableParamsSize =
    NVMLX_CUPTI_STRUCT_SIZE(PmEnableParams, pPmSamplingObject);
inline constexpr size_t kPmObjectParamsSize =
    NVMLX_CUPTI_STRUCT_SIZE(PmObjectParams, pPmSamplingObject);
inline constexpr size_t kPmDecodeDataParamsSize =
    NVMLX_CUPTI_STRUCT_SIZE(PmDecodeDataParams, overflow);
inline constexpr size_t kPmGetCounterAvailabilityParamsSize =
    NVMLX_CUPTI_STRUCT_SIZE(PmGetCounterAvailabilityParams, pCounterAvailabilityImage);
inline constexpr size_t kPmGetCounterDataSizeParamsSize =
    NVMLX_CUPTI_STRUCT_SIZE(PmGetCounterDataSizeParams, counterDataSize);
inline constexpr size_t kPmCounterDataImageInitializeParamsSize =
    NVMLX_CUPTI_STRUCT_SIZE(PmCounterDataImageInitializeParams, pCounterData);
inline constexpr size_t kPmGetCounterDataInfoParamsSize =
    NVMLX_CUPTI_STRUCT_SIZE(PmGetCounterDataInfoParams, numCompletedSamples);
inline constexpr size_t kPmGetSampleInfoParamsSize =
    NVMLX_CUPTI_STRUCT_SIZE(PmGetSampleInfoParams, endTimestamp);

// The functions, one X(name, params type) each. cuptiGetResultString is resolved separately.
#define NVMLX_CUPTI_FOR_EACH_FUNCTION(X)                                           \
  X(cuptiProfilerInitialize, ProfilerInitializeParams)                             \
  X(cuptiDeviceGetChipName, DeviceGetChipNameParams)                               \
  X(cuptiProfilerHostInitialize, HostInitializeParams)                             \
  X(cuptiProfilerHostDeinitialize, HostDeinitializeParams)                         \
  X(cuptiProfilerHostConfigAddMetrics, HostConfigAddMetricsParams)                 \
  X(cuptiProfilerHostGetConfigImageSize, HostGetConfigImageSizeParams)             \
  X(cuptiProfilerHostGetConfigImage, HostGetConfigImageParams)                     \
  X(cuptiProfilerHostGetNumOfPasses, HostGetNumOfPassesParams)                     \
  X(cuptiProfilerHostEvaluateToGpuValues, HostEvaluateToGpuValuesParams)           \
  X(cuptiPmSamplingSetConfig, PmSetConfigParams)                                   \
  X(cuptiPmSamplingEnable, PmEnableParams)                                         \
  X(cuptiPmSamplingDisable, PmObjectParams)                                        \
  X(cuptiPmSamplingStart, PmObjectParams)                                          \
  X(cuptiPmSamplingStop, PmObjectParams)                                           \
  X(cuptiPmSamplingDecodeData, PmDecodeDataParams)                                 \
  X(cuptiPmSamplingGetCounterAvailability, PmGetCounterAvailabilityParams)         \
  X(cuptiPmSamplingGetCounterDataSize, PmGetCounterDataSizeParams)                 \
  X(cuptiPmSamplingCounterDataImageInitialize, PmCounterDataImageInitializeParams) \
  X(cuptiPmSamplingGetCounterDataInfo, PmGetCounterDataInfoParams)                 \
  X(cuptiPmSamplingCounterDataGetSampleInfo, PmGetSampleInfoParams)

using GetResultStringFn = CUptiResult (*)(CUptiResult, const char**);

}  // namespace nvmlx::cupti::api

#endif  // NVML_EXPORTER_CUPTI_CUPTI_API_H_
