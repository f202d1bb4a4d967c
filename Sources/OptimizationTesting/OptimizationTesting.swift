// Test kit for applications and this package's own tests. See `LocalOptimizationAPIServer`.
@_exported import Optimization
