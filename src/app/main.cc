// nvml-exporter: dcgm-exporter-compatible GPU metrics straight from NVML.
#include "app/app.h"

int main(int argc, char** argv) { return nvmlx::app::Run(argc, argv); }
