// Our CUPTI declarations (cupti_api.h) against the CUDA toolkit's headers, field by field: built
// only when the toolkit's cupti_pmsampling.h is found at configure time (src/cupti/CMakeLists.txt).
#include "cupti/cupti_api.h"

#include <cupti_pmsampling.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_result.h>
#include <cupti_target.h>
#include <gtest/gtest.h>

#include <cstddef>

namespace nvmlx::cupti::api {
namespace {

#define SAME_FIELD(ours, theirs, field)                                    \
  static_assert(offsetof(ours, field) == offsetof(theirs, field), #field); \
  static_assert(sizeof(ours::field) == sizeof(theirs::field), #field)
#define SAME_SIZE(ours, theirs) \
  static_assert(k##ours##Size == theirs##_STRUCT_SIZE, #ours " structSize")

SAME_FIELD(PmSetConfigParams, CUpti_PmSampling_SetConfig_Params, pPmSamplingObject);
SAME_FIELD(PmSetConfigParams, CUpti_PmSampling_SetConfig_Params, configSize);
SAME_FIELD(PmSetConfigParams, CUpti_PmSampling_SetConfig_Params, pConfig);
SAME_FIELD(PmSetConfigParams, CUpti_PmSampling_SetConfig_Params, hardwareBufferSize);
SAME_FIELD(PmSetConfigParams, CUpti_PmSampling_SetConfig_Params, samplingInterval);
SAME_FIELD(PmSetConfigParams, CUpti_PmSampling_SetConfig_Params, triggerMode);
SAME_FIELD(PmSetConfigParams, CUpti_PmSampling_SetConfig_Params, hwBufferAppendMode);
SAME_SIZE(PmSetConfigParams, CUpti_PmSampling_SetConfig_Params);
SAME_FIELD(PmEnableParams, CUpti_PmSampling_Enable_Params, deviceIndex);
SAME_FIELD(PmEnableParams, CUpti_PmSampling_Enable_Params, pPmSamplingObject);
SAME_SIZE(PmEnableParams, CUpti_PmSampling_Enable_Params);
SAME_FIELD(PmObjectParams, CUpti_PmSampling_Disable_Params, pPmSamplingObject);
SAME_FIELD(PmObjectParams, CUpti_PmSampling_Start_Params, pPmSamplingObject);
SAME_FIELD(PmObjectParams, CUpti_PmSampling_Stop_Params, pPmSamplingObject);
static_assert(kPmObjectParamsSize == CUpti_PmSampling_Disable_Params_STRUCT_SIZE);
static_assert(kPmObjectParamsSize == CUpti_PmSampling_Start_Params_STRUCT_SIZE);
static_assert(kPmObjectParamsSize == CUpti_PmSampling_Stop_Params_STRUCT_SIZE);
SAME_FIELD(PmDecodeDataParams, CUpti_PmSampling_DecodeData_Params, pCounterDataImage);
SAME_FIELD(PmDecodeDataParams, CUpti_PmSampling_DecodeData_Params, counterDataImageSize);
SAME_FIELD(PmDecodeDataParams, CUpti_PmSampling_DecodeData_Params, decodeStopReason);
SAME_FIELD(PmDecodeDataParams, CUpti_PmSampling_DecodeData_Params, overflow);
SAME_SIZE(PmDecodeDataParams, CUpti_PmSampling_DecodeData_Params);
SAME_FIELD(PmGetCounterAvailabilityParams, CUpti_PmSampling_GetCounterAvailability_Params,
           deviceIndex);
SAME_FIELD(PmGetCounterAvailabilityParams, CUpti_PmSampling_GetCounterAvailability_Params,
           counterAvailabilityImageSize);
SAME_FIELD(PmGetCounterAvailabilityParams, CUpti_PmSampling_GetCounterAvailability_Params,
           pCounterAvailabilityImage);
SAME_SIZE(PmGetCounterAvailabilityParams, CUpti_PmSampling_GetCounterAvailability_Params);
SAME_FIELD(PmGetCounterDataSizeParams, CUpti_PmSampling_GetCounterDataSize_Params, pMetricNames);
SAME_FIELD(PmGetCounterDataSizeParams, CUpti_PmSampling_GetCounterDataSize_Params, numMetrics);
SAME_FIELD(PmGetCounterDataSizeParams, CUpti_PmSampling_GetCounterDataSize_Params, maxSamples);
SAME_FIELD(PmGetCounterDataSizeParams, CUpti_PmSampling_GetCounterDataSize_Params, counterDataSize);
SAME_SIZE(PmGetCounterDataSizeParams, CUpti_PmSampling_GetCounterDataSize_Params);
SAME_FIELD(PmCounterDataImageInitializeParams, CUpti_PmSampling_CounterDataImage_Initialize_Params,
           counterDataSize);
SAME_FIELD(PmCounterDataImageInitializeParams, CUpti_PmSampling_CounterDataImage_Initialize_Params,
           pCounterData);
SAME_SIZE(PmCounterDataImageInitializeParams, CUpti_PmSampling_CounterDataImage_Initialize_Params);
SAME_FIELD(PmGetCounterDataInfoParams, CUpti_PmSampling_GetCounterDataInfo_Params, numTotalSamples);
SAME_FIELD(PmGetCounterDataInfoParams, CUpti_PmSampling_GetCounterDataInfo_Params,
           numPopulatedSamples);
SAME_FIELD(PmGetCounterDataInfoParams, CUpti_PmSampling_GetCounterDataInfo_Params,
           numCompletedSamples);
SAME_SIZE(PmGetCounterDataInfoParams, CUpti_PmSampling_GetCounterDataInfo_Params);
SAME_FIELD(PmGetSampleInfoParams, CUpti_PmSampling_CounterData_GetSampleInfo_Params, sampleIndex);
SAME_FIELD(PmGetSampleInfoParams, CUpti_PmSampling_CounterData_GetSampleInfo_Params,
           startTimestamp);
SAME_FIELD(PmGetSampleInfoParams, CUpti_PmSampling_CounterData_GetSampleInfo_Params, endTimestamp);
SAME_SIZE(PmGetSampleInfoParams, CUpti_PmSampling_CounterData_GetSampleInfo_Params);
SAME_FIELD(HostInitializeParams, CUpti_Profiler_Host_Initialize_Params, profilerType);
SAME_FIELD(HostInitializeParams, CUpti_Profiler_Host_Initialize_Params, pChipName);
SAME_FIELD(HostInitializeParams, CUpti_Profiler_Host_Initialize_Params, pCounterAvailabilityImage);
SAME_FIELD(HostInitializeParams, CUpti_Profiler_Host_Initialize_Params, pHostObject);
SAME_SIZE(HostInitializeParams, CUpti_Profiler_Host_Initialize_Params);
SAME_SIZE(HostDeinitializeParams, CUpti_Profiler_Host_Deinitialize_Params);
SAME_FIELD(HostConfigAddMetricsParams, CUpti_Profiler_Host_ConfigAddMetrics_Params, ppMetricNames);
SAME_FIELD(HostConfigAddMetricsParams, CUpti_Profiler_Host_ConfigAddMetrics_Params, numMetrics);
SAME_SIZE(HostConfigAddMetricsParams, CUpti_Profiler_Host_ConfigAddMetrics_Params);
SAME_FIELD(HostGetConfigImageSizeParams, CUpti_Profiler_Host_GetConfigImageSize_Params,
           configImageSize);
SAME_SIZE(HostGetConfigImageSizeParams, CUpti_Profiler_Host_GetConfigImageSize_Params);
SAME_FIELD(HostGetConfigImageParams, CUpti_Profiler_Host_GetConfigImage_Params, pConfigImage);
SAME_SIZE(HostGetConfigImageParams, CUpti_Profiler_Host_GetConfigImage_Params);
SAME_FIELD(HostGetNumOfPassesParams, CUpti_Profiler_Host_GetNumOfPasses_Params, pConfigImage);
SAME_FIELD(HostGetNumOfPassesParams, CUpti_Profiler_Host_GetNumOfPasses_Params, numOfPasses);
SAME_SIZE(HostGetNumOfPassesParams, CUpti_Profiler_Host_GetNumOfPasses_Params);
SAME_FIELD(HostEvaluateToGpuValuesParams, CUpti_Profiler_Host_EvaluateToGpuValues_Params,
           rangeIndex);
SAME_FIELD(HostEvaluateToGpuValuesParams, CUpti_Profiler_Host_EvaluateToGpuValues_Params,
           ppMetricNames);
SAME_FIELD(HostEvaluateToGpuValuesParams, CUpti_Profiler_Host_EvaluateToGpuValues_Params,
           pMetricValues);
SAME_SIZE(HostEvaluateToGpuValuesParams, CUpti_Profiler_Host_EvaluateToGpuValues_Params);
SAME_FIELD(DeviceGetChipNameParams, CUpti_Device_GetChipName_Params, deviceIndex);
SAME_FIELD(DeviceGetChipNameParams, CUpti_Device_GetChipName_Params, pChipName);
SAME_SIZE(DeviceGetChipNameParams, CUpti_Device_GetChipName_Params);
SAME_SIZE(ProfilerInitializeParams, CUpti_Profiler_Initialize_Params);

TEST(CuptiApiTest, ConstantsMatchTheToolkit) {
  EXPECT_EQ(kErrorHardwareBusy, CUPTI_ERROR_HARDWARE_BUSY);
  EXPECT_EQ(kErrorInsufficientPrivileges, CUPTI_ERROR_INSUFFICIENT_PRIVILEGES);
  EXPECT_EQ(kErrorNotSupported, CUPTI_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(kErrorMigDeviceNotSupported, CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED);
  EXPECT_EQ(kErrorInvalidMetricName, CUPTI_ERROR_INVALID_METRIC_NAME);
  EXPECT_EQ(kErrorUnknown, CUPTI_ERROR_UNKNOWN);
  EXPECT_EQ(kProfilerTypePmSampling, CUPTI_PROFILER_TYPE_PM_SAMPLING);
  EXPECT_EQ(kTriggerGpuSysclkInterval, CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_SYSCLK_INTERVAL);
  EXPECT_EQ(kTriggerGpuTimeInterval, CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_TIME_INTERVAL);
  EXPECT_EQ(kAppendKeepLatest, CUPTI_PM_SAMPLING_HARDWARE_BUFFER_APPEND_MODE_KEEP_LATEST);
  EXPECT_EQ(kDecodeStopCounterDataFull, CUPTI_PM_SAMPLING_DECODE_STOP_REASON_COUNTER_DATA_FULL);
  static_assert(sizeof(CUpti_PmSampling_TriggerMode) == sizeof(int));
}

}  // namespace
}  // namespace nvmlx::cupti::api
