// RunToCompletion: one asynchronous Boost.Asio operation run to its end on the calling thread, for
// the attribution clients that talk to the API server (kube_client.cc) and the container runtime
// (container_runtime.cc) from their own refresher threads. It polls the io_context in short
// slices so that a stop request or a deadline is noticed within one slice, and then cancels the
// operation (through `cancel`, the caller's socket) and waits for its handler to run, as Asio
// requires before the operation's buffers may go.
//
// Thread-safety: as the io_context and socket it is given: one thread at a time.
#ifndef NVML_EXPORTER_ATTRIBUTE_BLOCKING_IO_H_
#define NVML_EXPORTER_ATTRIBUTE_BLOCKING_IO_H_

#include <boost/asio/io_context.hpp>
#include <boost/system/error_code.hpp>
#include <chrono>

namespace nvmlx::attribute {

struct BlockingResult {
  boost::system::error_code error;  // the operation's own result
  bool cancelled = false;           // ended by `cancel` (a stop or the deadline)
};

// `start(handler)` begins the operation; `should_cancel()` is asked after every slice of `poll`
// while it runs; `cancel()` is called at most once.
template <typename Start, typename ShouldCancel, typename Cancel>
BlockingResult RunToCompletion(boost::asio::io_context& ioc, std::chrono::milliseconds poll,
                               Start start, ShouldCancel should_cancel, Cancel cancel) {
  BlockingResult r;
  bool done = false;
  start([&](boost::system::error_code e, auto&&...) {
    r.error = e;
    done = true;
  });
  ioc.restart();
  while (!done) {  // NOLINT(bugprone-infinite-loop): the handler sets done
    ioc.run_one_for(poll);
    if (!done && !r.cancelled && should_cancel()) {
      cancel();
      r.cancelled = true;
    }
  }
  return r;
}

}  // namespace nvmlx::attribute

#endif  // NVML_EXPORTER_ATTRIBUTE_BLOCKING_IO_H_
