#ifndef C_JAVASCRIPTCORE_SHIM_H
#define C_JAVASCRIPTCORE_SHIM_H

#include <JavaScriptCore/JavaScript.h>
#include <stdbool.h>

// The declarations below are exported by libjavascriptcoregtk-4.1 but their headers are not
// installed (WebKit "private" API). The JavaScriptHost tests check that each one resolves.

/// Called periodically while a script runs past the group's execution time limit; return true
/// to terminate the script (it then fails with an exception and the context stays usable).
typedef bool (*JSShouldTerminateCallback)(JSContextRef ctx, void *context);

/// Arms the watchdog of every context in `group`: `limit` is in seconds of CPU time per entry
/// into the VM.
JS_EXPORT void JSContextGroupSetExecutionTimeLimit(JSContextGroupRef group, double limit,
                                                   JSShouldTerminateCallback callback,
                                                   void *context);
JS_EXPORT void JSContextGroupClearExecutionTimeLimit(JSContextGroupRef group);

/// A real, synchronous full collection (JSGarbageCollect is only a hint). For tests.
JS_EXPORT void JSSynchronousGarbageCollectForDebugging(JSContextRef ctx);

/// An object with heapSize, heapCapacity, extraMemorySize, objectCount, protectedObjectCount,
/// globalObjectCount, protectedGlobalObjectCount and objectTypeCounts.
JS_EXPORT JSObjectRef JSGetMemoryUsageStatistics(JSContextRef ctx);

#endif
