#pragma once
// A small work-sharing loop on std::thread: the sweep runner and the capacity
// planner use it to run independent simulations on all local cores.
#include <atomic>
#include <cstddef>
#include <functional>

namespace sl::sweep {

/// Number of worker threads for `jobs` (<= 0: all cores, at least 1).
int resolveJobs(int jobs);

/// Calls body(i) for every i in [0, n) on min(resolveJobs(jobs), n) threads
/// (the calling thread included). Items are handed out in index order. After
/// the first exception no new item starts; it is rethrown once all threads
/// have stopped. When `stop` becomes true no new item starts either.
void parallelFor(std::size_t n, int jobs, const std::function<void(std::size_t)>& body,
                 const std::atomic<bool>* stop = nullptr);

}  // namespace sl::sweep
