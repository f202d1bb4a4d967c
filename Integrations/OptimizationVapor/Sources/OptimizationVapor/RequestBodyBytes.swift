import Vapor

extension Request {
    /// The request's body, read up to `limit` bytes: nil when it is longer (the route answers as
    /// its contract says, usually 413), empty for none.
    func bodyBytes(upTo limit: Int) async throws -> [UInt8]? {
        let collected: ByteBuffer?
        do {
            collected = try await body.collect(max: limit).get()
        } catch let error as any AbortError where error.status == .payloadTooLarge {
            return nil
        }
        guard let collected else { return [] }
        return collected.readableBytes > limit ? nil : Array(collected.readableBytesView)
    }
}
