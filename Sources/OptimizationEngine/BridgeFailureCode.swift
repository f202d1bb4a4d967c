/// The code a failed async bridge call settles with beside its message: `__nativeSettle`'s
/// `code`, or the fourth element of a returned `[false, message, emitted, code]`; the JavaScript
/// side's `__optimization.ERROR_CODES` (core/settle.js). The host tells failures apart by this
/// code, never by the text of a message. A code the host does not know is read as none.
package enum BridgeFailureCode: String, Sendable {
    /// The host could not take an Experience event (`__nativeExperienceAccept` threw: its durable
    /// store failed), so the event method rejected.
    case experienceEventNotStored
    /// A service call of an Insights method on a request without a profile id
    /// (`service/request-events.js`): the channel throws
    /// `OptimizationError.profileIdRequired(method:)` with an empty method, which the calling
    /// request replaces with the method it called.
    case profileIdRequired
}
