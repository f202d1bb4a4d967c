import Optimization

extension VisitorCookies {
    /// The value of this cookie among a response's `Set-Cookie` header values, or nil when the
    /// response set none.
    public func sealedValue(inSetCookieHeaders headers: [String]) -> String? {
        for header in headers {
            let pair = header.split(separator: ";", maxSplits: 1).first?.split(separator: "=", maxSplits: 1) ?? []
            if pair.count == 2, pair[0] == name { return String(pair[1]) }
        }
        return nil
    }

    /// The state a response's `Set-Cookie` header values store, or nil when they set no such
    /// cookie or it does not open.
    public func state(inSetCookieHeaders headers: [String]) -> VisitorState? {
        sealedValue(inSetCookieHeaders: headers).flatMap(codec.open)
    }

    /// A `Cookie` header value carrying `state`, sealed now.
    public func cookieHeader(for state: VisitorState) -> String {
        "\(name)=\(codec.seal(state))"
    }
}
