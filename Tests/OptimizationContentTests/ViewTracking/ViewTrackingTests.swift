import Foundation
import JavaScriptHost
import Synchronization
import Testing
import Optimization
import OptimizationTestSupport
@testable import OptimizationContent

/// What a controller handed to its sink, in order.
enum RecordedViewEvent: Equatable, Sendable {
    case view(TrackViewPayload)
    case click(TrackClickPayload)
}

/// A ``ViewEventSink`` that records every event.
final class RecordingViewSink: ViewEventSink {
    private let recorded = Mutex<[RecordedViewEvent]>([])

    func submitView(_ payload: TrackViewPayload) { recorded.withLock { $0.append(.view(payload)) } }
    func submitClick(_ payload: TrackClickPayload) { recorded.withLock { $0.append(.click(payload)) } }

    var events: [RecordedViewEvent] { recorded.withLock { $0 } }

    var views: [TrackViewPayload] {
        events.compactMap { if case let .view(payload) = $0 { payload } else { nil } }
    }

    var durations: [Int] { views.map(\.viewDuration.wholeMilliseconds) }
}

/// A clock whose timers never fire: simulates a timer queue that is late.
final class StalledClock: HostClock, @unchecked Sendable {
    private let current = Mutex(1_767_225_600_000.0)
    func now() -> Double { current.withLock { $0 } }
    func set(_ value: Double) { current.withLock { $0 = value } }
    func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) -> any HostTimer { Never() }
    private struct Never: HostTimer { func cancel() {} }
}

private func makeTracker(
    _ clock: any HostClock, _ sink: RecordingViewSink, options: ViewTrackingOptions = .init()
) throws(ViewTrackingError) -> ViewTrackingController {
    try ViewTrackingController(
        sink: sink, clock: clock, componentId: "baseline-1", experienceId: "exp-1", variantIndex: 2,
        sticky: true, optimizationContextId: "ctx-1", options: options)
}

@Suite("View tracking: timing")
struct ViewTrackingTimingTests {
    @Test("1999 ms nothing, 2000 ms view, 7000 ms update, leave at 8500 ms final; one viewId")
    func dwellUpdateFinal() throws {
        let clock = ManualClock(), sink = RecordingViewSink()
        let tracker = try makeTracker(clock, sink)
        tracker.updateVisibility(ratio: 1)
        #expect(tracker.isVisible)
        let viewId = try #require(tracker.currentViewId)

        clock.advance(by: .milliseconds(1999))
        #expect(sink.events.isEmpty)
        clock.advance(by: .milliseconds(1))
        #expect(sink.durations == [2000])
        clock.advance(by: .milliseconds(4999))
        #expect(sink.durations == [2000])
        clock.advance(by: .milliseconds(1))
        #expect(sink.durations == [2000, 7000])
        clock.advance(by: .milliseconds(1500))
        #expect(sink.durations == [2000, 7000])
        tracker.updateVisibility(ratio: 0)
        #expect(sink.durations == [2000, 7000, 8500])
        #expect(!tracker.isVisible)
        #expect(tracker.currentViewId == nil)

        let expected = TrackViewPayload(
            componentId: "baseline-1", viewId: viewId, experienceId: "exp-1", optimizationContextId: "ctx-1",
            variantIndex: 2, viewDuration: .milliseconds(0), sticky: true, stickyTrackingKey: tracker.stickyTrackingKey)
        for view in sink.views {
            var normalized = view
            normalized.viewDuration = .zero
            #expect(normalized == expected)
        }
        #expect(clock.pendingTimerCount == 0)
        clock.advance(by: .milliseconds(60_000))
        #expect(sink.events.count == 3)
    }

    @Test("Updates keep coming every interval while visible")
    func periodicUpdates() throws {
        let clock = ManualClock(), sink = RecordingViewSink()
        let tracker = try makeTracker(clock, sink)
        tracker.setVisible(true)
        clock.advance(by: .milliseconds(22_000))
        #expect(sink.durations == [2000, 7000, 12000, 17000, 22000])
        #expect(Set(sink.views.map(\.viewId)).count == 1)
        #expect(clock.pendingTimerCount == 1)
        tracker.setVisible(false)
        #expect(sink.durations == [2000, 7000, 12000, 17000, 22000, 22000])
    }

    @Test("Leaving view before the dwell sends nothing; coming back starts a new cycle with a full dwell")
    func cycleBeforeDwell() throws {
        let clock = ManualClock(), sink = RecordingViewSink()
        let tracker = try makeTracker(clock, sink)
        tracker.setVisible(true)
        let first = tracker.currentViewId
        clock.advance(by: .milliseconds(1500))
        tracker.setVisible(false)
        #expect(clock.pendingTimerCount == 0)
        clock.advance(by: .milliseconds(100))
        tracker.setVisible(true)
        let second = tracker.currentViewId
        #expect(second != nil && second != first)
        clock.advance(by: .milliseconds(1999))
        #expect(sink.events.isEmpty)
        clock.advance(by: .milliseconds(1))
        #expect(sink.views.map(\.viewId) == [second])
        #expect(sink.durations == [2000])
    }

    @Test("Each cycle has its own viewId; the stickyTrackingKey stays")
    func viewIdPerCycle() throws {
        let clock = ManualClock(), sink = RecordingViewSink()
        let tracker = try makeTracker(clock, sink)
        for _ in 0..<3 {
            tracker.setVisible(true)
            clock.advance(by: .milliseconds(3000))
            tracker.setVisible(false)
            clock.advance(by: .milliseconds(1000))
        }
        #expect(sink.durations == [2000, 3000, 2000, 3000, 2000, 3000])
        let ids = sink.views.map(\.viewId)
        #expect(ids[0] == ids[1] && ids[2] == ids[3] && ids[4] == ids[5])
        #expect(Set(ids).count == 3)
        #expect(Set(sink.views.map(\.stickyTrackingKey)) == [tracker.stickyTrackingKey])
    }

    @Test("Flapping around the threshold every 500 ms for a minute sends nothing")
    func flapping() throws {
        let clock = ManualClock(), sink = RecordingViewSink()
        let tracker = try makeTracker(clock, sink)
        for step in 0..<120 {
            tracker.updateVisibility(ratio: step.isMultiple(of: 2) ? 0.8 : 0.79)
            #expect(clock.pendingTimerCount <= 1)
            clock.advance(by: .milliseconds(500))
        }
        #expect(sink.events.isEmpty)
    }

    @Test("Ratio exactly at the threshold counts as visible", arguments: [0.8, 0.81, 1.0, 1.5])
    func thresholdInclusive(ratio: Double) throws {
        let clock = ManualClock(), sink = RecordingViewSink()
        let tracker = try makeTracker(clock, sink)
        tracker.updateVisibility(ratio: ratio)
        #expect(tracker.isVisible)
        clock.advance(by: .milliseconds(2000))
        #expect(sink.durations == [2000])
    }

    @Test("Below the threshold is not visible", arguments: [0.79, 0.7999999, 0, -1, Double.nan])
    func belowThreshold(ratio: Double) throws {
        let clock = ManualClock(), sink = RecordingViewSink()
        let tracker = try makeTracker(clock, sink)
        tracker.updateVisibility(ratio: ratio)
        #expect(!tracker.isVisible)
        #expect(clock.pendingTimerCount == 0)
        clock.advance(by: .milliseconds(10_000))
        #expect(sink.events.isEmpty)
    }

    @Test("Repeated visible updates do not restart the dwell")
    func repeatedVisibleUpdates() throws {
        let clock = ManualClock(), sink = RecordingViewSink()
        let tracker = try makeTracker(clock, sink)
        tracker.updateVisibility(ratio: 1)
        let viewId = tracker.currentViewId
        for ratio in [1.0, 0.9, 1.0] {
            clock.advance(by: .milliseconds(500))
            tracker.updateVisibility(ratio: ratio)
            #expect(tracker.currentViewId == viewId)
            #expect(clock.pendingTimerCount == 1)
        }
        clock.advance(by: .milliseconds(500))
        #expect(sink.views.map(\.viewId) == [viewId])
        #expect(sink.durations == [2000])
    }

    @Test("A dip that stays at or above the ratio keeps the cycle; one below ends it")
    func dips() throws {
        let clock = ManualClock(), sink = RecordingViewSink()
        let tracker = try makeTracker(clock, sink)
        tracker.updateVisibility(ratio: 1)
        clock.advance(by: .milliseconds(1000))
        tracker.updateVisibility(ratio: 0.8)
        clock.advance(by: .milliseconds(1000))
        #expect(sink.durations == [2000])
        clock.advance(by: .milliseconds(500))
        tracker.updateVisibility(ratio: 0.54)
        #expect(sink.durations == [2000, 2500])
        #expect(!tracker.isVisible)
    }

    @Test("A view that fell due while the timer queue was late is still sent when the cycle ends")
    func lateTimer() throws {
        let clock = StalledClock(), sink = RecordingViewSink()
        let tracker = try makeTracker(clock, sink)
        let start = clock.now()
        tracker.setVisible(true)
        clock.set(start + 1999)
        tracker.setVisible(false)
        #expect(sink.events.isEmpty)
        tracker.setVisible(true)
        clock.set(start + 1999 + 2500)
        tracker.setVisible(false)
        #expect(sink.durations == [2500, 2500])
        #expect(Set(sink.views.map(\.viewId)).count == 1)
    }

    @Test("Fractional clock times truncate durations to whole milliseconds")
    func truncation() throws {
        let clock = ManualClock(start: 1000.25), sink = RecordingViewSink()
        let tracker = try makeTracker(clock, sink, options: .init(dwellTime: .milliseconds(1500.5), viewDurationUpdateInterval: .milliseconds(1000.7)))
        tracker.setVisible(true)
        clock.advance(by: .milliseconds(2600))
        clock.advance(by: .milliseconds(0.9))
        tracker.setVisible(false)
        #expect(sink.durations == [1500, 2501, 2600])
    }
}

@Suite("View tracking: lifecycle")
struct ViewTrackingLifecycleTests {
    @Test("Pause before the dwell sends nothing")
    func pauseBeforeDwell() throws {
        let clock = ManualClock(), sink = RecordingViewSink()
        let tracker = try makeTracker(clock, sink)
        tracker.setVisible(true)
        clock.advance(by: .milliseconds(1999))
        tracker.pause()
        #expect(tracker.isPaused && !tracker.isVisible)
        #expect(clock.pendingTimerCount == 0)
        clock.advance(by: .milliseconds(60_000))
        #expect(sink.events.isEmpty)
    }

    @Test("Pause after the view sends the final update, once")
    func pauseAfterView() throws {
        let clock = ManualClock(), sink = RecordingViewSink()
        let tracker = try makeTracker(clock, sink)
        tracker.setVisible(true)
        clock.advance(by: .milliseconds(3000))
        tracker.pause()
        tracker.pause()
        #expect(sink.durations == [2000, 3000])
        #expect(sink.views[0].viewId == sink.views[1].viewId)
        clock.advance(by: .milliseconds(60_000))
        tracker.setVisible(false)
        #expect(sink.events.count == 2)
    }

    @Test("Resume while visible starts a new cycle with a new viewId and a full dwell")
    func resumeWhileVisible() throws {
        let clock = ManualClock(), sink = RecordingViewSink()
        let tracker = try makeTracker(clock, sink)
        tracker.setVisible(true)
        clock.advance(by: .milliseconds(2500))
        let first = try #require(tracker.currentViewId)
        tracker.pause()
        clock.advance(by: .milliseconds(10_000))
        tracker.resume()
        let second = try #require(tracker.currentViewId)
        #expect(first != second)
        clock.advance(by: .milliseconds(1999))
        #expect(sink.durations == [2000, 2500])
        clock.advance(by: .milliseconds(1))
        #expect(sink.durations == [2000, 2500, 2000])
        #expect(sink.views.map(\.viewId) == [first, first, second])
    }

    @Test("While paused, visibility is remembered but starts no cycle; resume uses the last ratio")
    func visibilityWhilePaused() throws {
        let clock = ManualClock(), sink = RecordingViewSink()
        let tracker = try makeTracker(clock, sink)
        tracker.pause()
        tracker.setVisible(true)
        #expect(!tracker.isVisible && clock.pendingTimerCount == 0)
        clock.advance(by: .milliseconds(5000))
        tracker.updateVisibility(ratio: 0.5)
        tracker.resume()
        #expect(!tracker.isVisible)
        tracker.pause()
        tracker.updateVisibility(ratio: 0.9)
        tracker.resume()
        #expect(tracker.isVisible)
        clock.advance(by: .milliseconds(2000))
        #expect(sink.durations == [2000])
    }

    @Test("Resume without a pause does nothing")
    func resumeWithoutPause() throws {
        let clock = ManualClock(), sink = RecordingViewSink()
        let tracker = try makeTracker(clock, sink)
        tracker.setVisible(true)
        let viewId = tracker.currentViewId
        clock.advance(by: .milliseconds(1000))
        tracker.resume()
        #expect(tracker.currentViewId == viewId)
        clock.advance(by: .milliseconds(1000))
        #expect(sink.durations == [2000])
    }

    @Test("Stop cancels pending timers: no further events, ever")
    func stopCancels() throws {
        let clock = ManualClock(), sink = RecordingViewSink()
        let tracker = try makeTracker(clock, sink)
        tracker.setVisible(true)
        clock.advance(by: .milliseconds(1000))
        #expect(clock.pendingTimerCount == 1)
        tracker.stop()
        #expect(clock.pendingTimerCount == 0)
        #expect(tracker.isStopped && !tracker.isVisible)
        clock.advance(by: .milliseconds(1_000_000))
        tracker.setVisible(false)
        tracker.setVisible(true)
        tracker.pause()
        tracker.resume()
        tracker.trackClick()
        clock.advance(by: .milliseconds(1_000_000))
        #expect(sink.events.isEmpty)
        #expect(clock.pendingTimerCount == 0)
    }

    @Test("Stop after the view sends the final update with the total duration and the cycle's viewId, then nothing")
    func stopAfterView() throws {
        let clock = ManualClock(), sink = RecordingViewSink()
        let tracker = try makeTracker(clock, sink)
        tracker.setVisible(true)
        let viewId = try #require(tracker.currentViewId)
        clock.advance(by: .milliseconds(8500))
        #expect(sink.durations == [2000, 7000])
        tracker.stop()
        #expect(sink.durations == [2000, 7000, 8500])
        #expect(sink.views.map(\.viewId) == [viewId, viewId, viewId])
        #expect(sink.views.last == TrackViewPayload(
            componentId: "baseline-1", viewId: viewId, experienceId: "exp-1", optimizationContextId: "ctx-1",
            variantIndex: 2, viewDuration: .milliseconds(8500), sticky: true, stickyTrackingKey: tracker.stickyTrackingKey))
        #expect(tracker.isStopped && !tracker.isVisible && tracker.currentViewId == nil)
        #expect(clock.pendingTimerCount == 0)
        clock.advance(by: .milliseconds(100_000))
        tracker.setVisible(false)
        tracker.setVisible(true)
        tracker.pause()
        tracker.resume()
        clock.advance(by: .milliseconds(100_000))
        #expect(sink.events.count == 3)
    }

    @Test("Stop one millisecond before the dwell sends nothing")
    func stopBeforeDwell() throws {
        let clock = ManualClock(), sink = RecordingViewSink()
        let tracker = try makeTracker(clock, sink)
        tracker.setVisible(true)
        clock.advance(by: .milliseconds(1999))
        tracker.stop()
        #expect(clock.pendingTimerCount == 0)
        clock.advance(by: .milliseconds(100_000))
        #expect(sink.events.isEmpty)
    }

    @Test("Stop twice sends one final update")
    func stopTwice() throws {
        let clock = ManualClock(), sink = RecordingViewSink()
        let tracker = try makeTracker(clock, sink)
        tracker.setVisible(true)
        clock.advance(by: .milliseconds(3000))
        tracker.stop()
        clock.advance(by: .milliseconds(500))
        tracker.stop()
        #expect(sink.durations == [2000, 3000])
        #expect(Set(sink.views.map(\.viewId)).count == 1)
    }

    @Test("Stop after a pause sends no second final update")
    func pauseThenStop() throws {
        let clock = ManualClock(), sink = RecordingViewSink()
        let tracker = try makeTracker(clock, sink)
        tracker.setVisible(true)
        clock.advance(by: .milliseconds(3000))
        tracker.pause()
        #expect(sink.durations == [2000, 3000])
        clock.advance(by: .milliseconds(10_000))
        tracker.stop()
        clock.advance(by: .milliseconds(100_000))
        #expect(sink.durations == [2000, 3000])
    }

    @Test("Stop after the dwell fell due while the timer queue was late sends the view, then the final update")
    func stopWithLateTimer() throws {
        let clock = StalledClock(), sink = RecordingViewSink()
        let tracker = try makeTracker(clock, sink)
        tracker.setVisible(true)
        clock.set(clock.now() + 2500)
        tracker.stop()
        #expect(sink.durations == [2500, 2500])
        #expect(Set(sink.views.map(\.viewId)).count == 1)
    }

    @Test("Releasing the controller cancels its timer")
    func deinitCancels() throws {
        let clock = ManualClock(), sink = RecordingViewSink()
        do {
            let tracker = try makeTracker(clock, sink)
            tracker.setVisible(true)
            clock.advance(by: .milliseconds(1000))
            #expect(clock.pendingTimerCount == 1)
        }
        #expect(clock.pendingTimerCount == 0)
        clock.advance(by: .milliseconds(100_000))
        #expect(sink.events.isEmpty)
    }

    @Test("Releasing the controller after the view sends the final update, then nothing")
    func deinitAfterView() throws {
        let clock = ManualClock(), sink = RecordingViewSink()
        var tracker: ViewTrackingController? = try makeTracker(clock, sink)
        tracker?.setVisible(true)
        clock.advance(by: .milliseconds(8500))
        let viewId = try #require(tracker?.currentViewId)
        let stickyTrackingKey = try #require(tracker?.stickyTrackingKey)
        #expect(sink.durations == [2000, 7000])
        tracker = nil
        #expect(sink.durations == [2000, 7000, 8500])
        #expect(sink.views.last == TrackViewPayload(
            componentId: "baseline-1", viewId: viewId, experienceId: "exp-1", optimizationContextId: "ctx-1",
            variantIndex: 2, viewDuration: .milliseconds(8500), sticky: true, stickyTrackingKey: stickyTrackingKey))
        #expect(clock.pendingTimerCount == 0)
        clock.advance(by: .milliseconds(100_000))
        #expect(sink.events.count == 3)
    }

    @Test("Releasing a stopped or paused controller sends no second final update")
    func deinitAfterStopOrPause() throws {
        let clock = ManualClock(), sink = RecordingViewSink()
        var stopped: ViewTrackingController? = try makeTracker(clock, sink)
        var paused: ViewTrackingController? = try makeTracker(clock, sink)
        stopped?.setVisible(true)
        paused?.setVisible(true)
        clock.advance(by: .milliseconds(3000))
        stopped?.stop()
        paused?.pause()
        #expect(sink.durations == [2000, 2000, 3000, 3000])
        clock.advance(by: .milliseconds(1000))
        stopped = nil
        paused = nil
        #expect(sink.durations == [2000, 2000, 3000, 3000])
    }

    @Test("trackClick sends the controller's metadata, visible or not")
    func click() throws {
        let clock = ManualClock(), sink = RecordingViewSink()
        let tracker = try makeTracker(clock, sink)
        tracker.trackClick()
        tracker.pause()
        tracker.trackClick()
        let expected = TrackClickPayload(componentId: "baseline-1", experienceId: "exp-1", optimizationContextId: "ctx-1", variantIndex: 2)
        #expect(sink.events == [.click(expected), .click(expected)])
    }
}

@Suite("View tracking: options and metadata")
struct ViewTrackingOptionsTests {
    @Test("Defaults are 0.8 / 2000 / 5000")
    func defaults() {
        let options = ViewTrackingOptions()
        #expect(options.minVisibleRatio == 0.8 && options.dwellTime == .seconds(2) && options.viewDurationUpdateInterval == .seconds(5))
    }

    @Test("Per-tracker overrides change the timing")
    func overrides() throws {
        let clock = ManualClock(), sink = RecordingViewSink()
        let options = ViewTrackingOptions(minVisibleRatio: 0.5, dwellTime: .milliseconds(1000), viewDurationUpdateInterval: .milliseconds(3000))
        let tracker = try makeTracker(clock, sink, options: options)
        #expect(tracker.options == options)
        tracker.updateVisibility(ratio: 0.5)
        clock.advance(by: .milliseconds(999))
        #expect(sink.events.isEmpty)
        clock.advance(by: .milliseconds(6001))
        #expect(sink.durations == [1000, 4000, 7000])
        clock.advance(by: .milliseconds(500))
        tracker.updateVisibility(ratio: 0.49)
        #expect(sink.durations == [1000, 4000, 7000, 7500])

        let strict = try makeTracker(clock, sink, options: .init(minVisibleRatio: 1))
        strict.updateVisibility(ratio: 0.99)
        #expect(!strict.isVisible)
        strict.updateVisibility(ratio: 1)
        #expect(strict.isVisible)
    }

    static let invalid: [(ViewTrackingOptions, ViewTrackingError.Field, Double)] = [
        (.init(minVisibleRatio: 0), .minVisibleRatio, 0),
        (.init(minVisibleRatio: -0.5), .minVisibleRatio, -0.5),
        (.init(minVisibleRatio: 1.01), .minVisibleRatio, 1.01),
        (.init(minVisibleRatio: .nan), .minVisibleRatio, .nan),
        (.init(minVisibleRatio: .infinity), .minVisibleRatio, .infinity),
        (.init(dwellTime: .zero), .dwellTime, 0),
        (.init(dwellTime: .milliseconds(-2000)), .dwellTime, -2000),
        (.init(viewDurationUpdateInterval: .zero), .viewDurationUpdateInterval, 0),
        (.init(viewDurationUpdateInterval: .milliseconds(-1)), .viewDurationUpdateInterval, -1),
    ]

    @Test("Invalid values are rejected with a typed error naming the field and value", arguments: invalid)
    func invalidOptions(options: ViewTrackingOptions, field: ViewTrackingError.Field, value: Double) throws {
        let clock = ManualClock(), sink = RecordingViewSink()
        do {
            _ = try makeTracker(clock, sink, options: options)
            Issue.record("accepted \(options)")
        } catch {
            guard case let .invalidOption(actualField, actualValue) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(actualField == field)
            #expect(actualValue == value || (actualValue.isNaN && value.isNaN))
            #expect(error.description.contains(field.rawValue))
            #expect(error.description.contains("\(value)"))
        }
        #expect(throws: ViewTrackingError.self) { try options.validate() }
        #expect(clock.pendingTimerCount == 0)
    }

    @Test("An empty componentId is rejected")
    func emptyComponentId() {
        #expect(throws: ViewTrackingError.emptyComponentId) {
            try ViewTrackingController(sink: RecordingViewSink(), clock: ManualClock(), componentId: "")
        }
    }

    @Test("Metadata from a resolved entry: baseline id, selection, context id")
    func metadataFromResolution() throws {
        let resolved = ResolvedOptimizedEntry(
            entry: ["sys": ["id": "variant-entry"]],
            selectedOptimization: ["experienceId": "exp-9", "variantIndex": 3, "sticky": true],
            optimizationContextId: "ctx-9")
        let sink = RecordingViewSink(), clock = ManualClock()
        let tracker = try ViewTrackingController(sink: sink, clock: clock, baselineId: "baseline-9", resolved: resolved)
        #expect(tracker.componentId == "baseline-9")
        #expect(tracker.experienceId == "exp-9" && tracker.variantIndex == 3 && tracker.sticky == true)
        #expect(tracker.optimizationContextId == "ctx-9")

        let plain = try ViewTrackingController(
            sink: sink, clock: clock, baselineId: "baseline-9", resolved: ResolvedOptimizedEntry(entry: ["sys": ["id": "baseline-9"]]))
        #expect(plain.experienceId == nil && plain.variantIndex == 0 && plain.sticky == nil && plain.optimizationContextId == nil)
        #expect(plain.stickyTrackingKey != tracker.stickyTrackingKey)
    }
}

@Suite("View tracking: scale and threads")
struct ViewTrackingScaleTests {
    @Test("1,000 controllers on one clock: at most one pending timer each, the right events")
    func thousandControllers() throws {
        let clock = ManualClock(), sink = RecordingViewSink()
        let trackers = try (0..<1000).map { index in
            try ViewTrackingController(sink: sink, clock: clock, componentId: "entry-\(index)")
        }
        for tracker in trackers { tracker.setVisible(true) }
        var maxPending = clock.pendingTimerCount
        for _ in 0..<600 {
            clock.advance(by: .milliseconds(100))
            maxPending = max(maxPending, clock.pendingTimerCount)
        }
        #expect(maxPending <= 1000)
        for tracker in trackers { tracker.setVisible(false) }
        #expect(clock.pendingTimerCount == 0)

        // 60 s visible: view at 2000, updates at 7000 … 57000, final at 60000.
        let expected = [2000] + stride(from: 7000, through: 57000, by: 5000).map { $0 } + [60000]
        let byComponent = Dictionary(grouping: sink.views, by: \.componentId)
        #expect(byComponent.count == 1000)
        for (_, views) in byComponent {
            #expect(views.map(\.viewDuration.wholeMilliseconds) == expected)
            #expect(Set(views.map(\.viewId)).count == 1)
        }
        #expect(Set(sink.views.map(\.viewId)).count == 1000)
    }

    @Test("Concurrent feeding from many threads keeps one timer and a consistent state")
    func concurrentFeeding() throws {
        let clock = ManualClock(), sink = RecordingViewSink()
        let tracker = try makeTracker(clock, sink)
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            for step in 0..<2000 {
                switch (worker + step) % 5 {
                case 0: tracker.updateVisibility(ratio: 0.9)
                case 1: tracker.setVisible(false)
                case 2: tracker.pause()
                case 3: tracker.resume()
                default: clock.advance(by: .milliseconds(1))
                }
                _ = tracker.isVisible
            }
        }
        #expect(clock.pendingTimerCount <= 1)
        tracker.pause()
        tracker.resume()
        tracker.setVisible(true)
        #expect(clock.pendingTimerCount == 1)
        tracker.stop()
        #expect(clock.pendingTimerCount == 0)
        // Every cycle that sent a view also sent its final update.
        let byView = Dictionary(grouping: sink.views, by: \.viewId)
        for (_, views) in byView { #expect(views.count >= 2) }
    }
}
