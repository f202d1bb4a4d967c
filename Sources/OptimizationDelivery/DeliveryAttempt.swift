/// Which attempt of one delivery the HTTP request being sent is, for the transport's traces
/// (`http.request.resend_count`): a task-local the senders set around each `FetchTransport/send(_:)`.
///
/// ``resendCount`` is 0 for a first attempt; an Experience overload retry counts its retries, an
/// Insights flight the failed flights in a row before it. Read it from the task that sends.
package enum DeliveryAttempt {
    /// How many times this delivery was attempted before (0: the first attempt).
    @TaskLocal package static var resendCount = 0
}
