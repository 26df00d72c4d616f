import CShims

/// The kernel's name for the calling thread (`/proc/PID/task/TID/comm`, at most 15 bytes).
///
/// Foundation's `Thread.name` is not passed to the kernel on Linux, so a thread started from
/// a dispatch worker kept its creator's name (`...-qos.overcommit`), and `top -H`, `perf` and
/// the per-thread context switches in `/proc` could not tell the clock or render thread from
/// dispatch's own. Called first thing on each thread of the engine.
public func setKernelThreadName(_ name: String) {
    precondition(name.utf8.count <= 15, "a thread's kernel name has at most 15 bytes")
    cshims_name_this_thread(name)
}
