// The engine's API is written in the shared vocabulary (its calls throw OptimizationError and
// answer EventResult, its configuration is OptimizationConfig): a target that imports the engine
// sees those types too.
@_exported import OptimizationVocabulary
