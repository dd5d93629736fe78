#include "runtime/Fork.h"

#include <pthread.h>

#include <algorithm>
#include <vector>

namespace ptxjit::runtime {
namespace {

struct Registered {
  std::mutex *mutex;
  int rank;
};

// Never destroyed: fork() may run during static destruction (a destructor of another library).
struct ForkRegistry {
  // Held from the prepare handler until the parent and child handlers: a lock registered while
  // a fork is under way waits, so no lock is held at fork() without having been taken by it.
  std::mutex mutex;
  std::vector<Registered> locks; // sorted by rank (stable: equal ranks in registration order)
  std::vector<void (*)()> childHandlers;
};

ForkRegistry &registry() {
  static ForkRegistry *r = new ForkRegistry;
  return *r;
}

void prepare() {
  ForkRegistry &r = registry();
  r.mutex.lock();
  for (Registered &l : r.locks)
    l.mutex->lock();
}

void releaseAll() {
  ForkRegistry &r = registry();
  for (auto it = r.locks.rbegin(); it != r.locks.rend(); ++it)
    it->mutex->unlock();
}

void inParent() {
  releaseAll();
  registry().mutex.unlock();
}

void inChild() {
  // The forking thread took every lock in prepare(); as the child's only thread it releases them
  // (std::mutex is an ordinary pthread mutex: unlocking needs no owner check).
  releaseAll();
  ForkRegistry &r = registry();
  for (void (*handler)() : r.childHandlers)
    handler();
  r.mutex.unlock();
}

void installOnce() {
  static const bool installed = [] {
    pthread_atfork(prepare, inParent, inChild);
    return true;
  }();
  (void)installed;
}

} // namespace

void registerForkLock(std::mutex &m, int rank) {
  installOnce();
  ForkRegistry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto at = std::upper_bound(r.locks.begin(), r.locks.end(), rank,
                             [](int k, const Registered &l) { return k < l.rank; });
  r.locks.insert(at, Registered{&m, rank});
}

void onForkChild(void (*handler)()) {
  installOnce();
  ForkRegistry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.childHandlers.push_back(handler);
}

} // namespace ptxjit::runtime
