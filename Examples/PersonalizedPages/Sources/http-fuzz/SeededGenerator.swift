import OptimizationTesting

/// The fuzzer's generator: the test kit's seeded SplitMix64, so the same seed gives the same
/// sequence of requests on every machine and run.
typealias SeededGenerator = SeededRandomNumberGenerator

extension SeededRandomNumberGenerator {
    /// True with probability `percent`/100.
    mutating func chance(_ percent: Int) -> Bool {
        Int.random(in: 0..<100, using: &self) < percent
    }

    /// One element of a non-empty array.
    mutating func pick<T>(_ choices: [T]) -> T {
        choices[Int.random(in: 0..<choices.count, using: &self)]
    }

    /// `count` random bytes.
    mutating func bytes(_ count: Int) -> [UInt8] {
        (0..<count).map { _ in UInt8.random(in: 0...255, using: &self) }
    }
}
